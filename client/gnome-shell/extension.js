// SPDX-License-Identifier: GPL-2.0-or-later
// extension.js: laptop-moded in GNOME Shell's Quick Settings (GNOME 45 to 48).
// A "Laptop Mode" menu toggle whose subtitle says the state in a word or
// two, and a top-bar icon while laptop mode is on. Owns the widgets; the
// words are words.js's, the bus is daemon.js's.

import Gio from 'gi://Gio';
import GObject from 'gi://GObject';
import GLib from 'gi://GLib';

import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';
import {QuickMenuToggle, SystemIndicator} from 'resource:///org/gnome/shell/ui/quickSettings.js';
import {Extension, gettext as _} from 'resource:///org/gnome/shell/extensions/extension.js';

import {Daemon, isCancelled, isDenied} from './daemon.js';
import {openReport} from './report.js';
import * as Words from './words.js';

const MODES = ['auto', 'on', 'off'];

// MaxLostWork presets, in seconds: the daemon's default (600) and a few
// either side of it. A value set elsewhere (laptop-modectl set) shows in
// the submenu's label, with no preset checked.
const LOST_WORK_PRESETS = [60, 300, 600, 1800, 3600];

const LaptopModeToggle = GObject.registerClass(
class LaptopModeToggle extends QuickMenuToggle {
    _init(daemon, gicon) {
        super._init({
            title: _('Laptop Mode'),
            gicon,
            // Checked follows the daemon's Active, never the click itself:
            // a refused Start must not leave the toggle on.
            toggleMode: false,
        });
        this._daemon = daemon;
        this._busy = false;
        this._reportCancellable = new Gio.Cancellable();
        this._reportRunning = false;

        this.connect('clicked', () => this._toggle());

        this.menu.setHeader(gicon, _('Laptop Mode'));
        // Who holds laptop mode off, under the header's mode line.
        this._details = new PopupMenu.PopupMenuSection();
        this.menu.addMenuItem(this._details);

        // The mode: automatic, on, off.
        this._modeItems = new Map();
        for (const mode of MODES) {
            const item = new PopupMenu.PopupMenuItem(Words.modeLabel(mode));
            item.connect('activate', () => this._call('SetMode',
                new GLib.Variant('(s)', [mode])));
            this._modeItems.set(mode, item);
            this.menu.addMenuItem(item);
        }

        // MaxLostWork, from a few presets.
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._lostWork = new PopupMenu.PopupSubMenuMenuItem('', false);
        this._lostWorkItems = new Map();
        for (const seconds of LOST_WORK_PRESETS) {
            const item = new PopupMenu.PopupMenuItem(Words.duration(seconds));
            item.connect('activate', () => this._call('Configure',
                new GLib.Variant('(a{sv})', [{MaxLostWork: GLib.Variant.new_uint32(seconds)}])));
            this._lostWorkItems.set(seconds, item);
            this._lostWork.menu.addMenuItem(item);
        }
        this.menu.addMenuItem(this._lostWork);

        // Today, per disk: rebuilt when the state changes.
        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem(_('Today')));
        this._today = new PopupMenu.PopupMenuSection();
        this.menu.addMenuItem(this._today);

        this.menu.addMenuItem(new PopupMenu.PopupSeparatorMenuItem());
        this._report = this.menu.addAction(_('Open Today’s Report'),
            () => this._openReport());

        // Who woke the disks is read when someone looks (the menu opens,
        // or a disk wakes while it is open), not on each spin-up of a day
        // nobody reads about.
        this._menuOpenId = this.menu.connect('open-state-changed', (m, open) => {
            if (open)
                this._daemon.refreshWakers();
        });
        this._summaryId = daemon.connect('summary-changed', () => {
            if (this.menu.isOpen)
                this._daemon.refreshWakers();
        });
        this._changedId = daemon.connect('changed', () => this._sync());
        // The 'destroy' signal rather than an override: it runs however
        // the actor goes.
        this._destroyed = false;
        this.connect('destroy', () => this._onDestroy());
        this._sync();
    }

    _sync() {
        // A call or a report may end after the extension was disabled.
        if (this._destroyed)
            return;
        const state = this._daemon.state;

        this.subtitle = Words.subtitle(state);
        this.checked = state.available && state.active;
        // Unavailable: shown, so that a daemon that stopped is seen, but
        // there is nothing to click.
        this.reactive = state.available && !this._busy;
        this.menuEnabled = state.available;

        // The header's subtitle is one line; the rest go under it.
        const [first, ...rest] = Words.details(state);
        this.menu.setHeader(this.gicon, _('Laptop Mode'), first);
        this._details.removeAll();
        for (const line of rest)
            this._details.addMenuItem(this._infoItem(line, false));

        for (const [mode, item] of this._modeItems) {
            item.setOrnament(mode === state.mode
                ? PopupMenu.Ornament.CHECK : PopupMenu.Ornament.NONE);
        }
        this._lostWork.label.text = Words.lostWork(state.maxLostWork);
        for (const [seconds, item] of this._lostWorkItems) {
            item.setOrnament(seconds === state.maxLostWork
                ? PopupMenu.Ornament.CHECK : PopupMenu.Ornament.NONE);
        }

        this._today.removeAll();
        for (const {text, secondary} of Words.today(state.summary, state.wakers, state.monitor,
            state.explanations))
            this._today.addMenuItem(this._infoItem(text, secondary));

        this._report.label.text = this._reportRunning
            ? _('Writing today’s report…') : _('Open Today’s Report');
        this._report.setSensitive(state.available && !this._reportRunning);
    }

    // A line to read, not to click.
    _infoItem(text, secondary) {
        const item = new PopupMenu.PopupMenuItem(text, {reactive: false, can_focus: false});
        if (secondary)
            item.add_style_class_name('laptop-mode-secondary');
        return item;
    }

    _toggle() {
        const {available, active} = this._daemon.state;
        if (available)
            this._call(active ? 'Stop' : 'Start', null);
    }

    // A person clicked: polkit may ask for a password (interactive).
    async _call(method, params) {
        this._busy = true;
        this._sync();
        try {
            await this._daemon.call(method, params, true);
        } catch (e) {
            this._failed(method, e);
        } finally {
            this._busy = false;
            this._sync();
        }
    }

    _failed(method, error) {
        if (isCancelled(error))
            return;
        const denied = isDenied(error);
        if (error instanceof GLib.Error)
            Gio.DBusError.strip_remote_error(error);
        const [title, body] = Words.callFailed(method, denied, error.message);
        // A refusal is the user's business, not a fault: no log line.
        if (denied)
            Main.notify(title, body);
        else
            Main.notifyError(title, body);
    }

    async _openReport() {
        if (this._reportRunning)
            return;
        this._reportRunning = true;
        this._sync();
        try {
            await openReport(this._reportCancellable);
        } catch (e) {
            if (!isCancelled(e)) {
                Main.notifyError(e.step === 'open'
                    ? _('Could not open today’s report')
                    : _('Could not write today’s report'), e.message);
            }
        } finally {
            this._reportRunning = false;
            this._sync();
        }
    }

    _onDestroy() {
        this._destroyed = true;
        this._reportCancellable.cancel();
        this.menu.disconnect(this._menuOpenId);
        this._daemon.disconnect(this._summaryId);
        this._daemon.disconnect(this._changedId);
    }
});

const LaptopModeIndicator = GObject.registerClass(
class LaptopModeIndicator extends SystemIndicator {
    _init(daemon, gicon) {
        super._init();
        this._daemon = daemon;

        // The top-bar icon: only while laptop mode is on.
        this._icon = this._addIndicator();
        this._icon.gicon = gicon;
        this._icon.accessible_name = _('Laptop mode is on');

        // At the shell's exit the grid disposes the toggle before this
        // indicator: a toggle gone already is not destroyed again.
        const toggle = new LaptopModeToggle(daemon, gicon);
        toggle.connect('destroy', () => {
            this.quickSettingsItems = this.quickSettingsItems.filter(item => item !== toggle);
        });
        this.quickSettingsItems.push(toggle);

        this._changedId = daemon.connect('changed', () => this._sync());
        this.connect('destroy', () => this._onDestroy());
        this._sync();
    }

    _sync() {
        const {available, active} = this._daemon.state;
        this._icon.visible = available && active;
    }

    // The toggle lives in the Quick Settings grid, not in this box: it
    // goes with the indicator.
    _onDestroy() {
        this._daemon.disconnect(this._changedId);
        this.quickSettingsItems.forEach(item => item.destroy());
        this.quickSettingsItems = [];
    }
});

export default class LaptopModeExtension extends Extension {
    enable() {
        // Symbolic, so the shell colours it as its own icons.
        const gicon = Gio.FileIcon.new(
            this.dir.resolve_relative_path('icons/laptop-mode-symbolic.svg'));
        this._daemon = new Daemon();
        this._indicator = new LaptopModeIndicator(this._daemon, gicon);
        Main.panel.statusArea.quickSettings.addExternalIndicator(this._indicator);
    }

    disable() {
        this._indicator?.destroy();
        this._indicator = null;
        this._daemon?.destroy();
        this._daemon = null;
    }
}
