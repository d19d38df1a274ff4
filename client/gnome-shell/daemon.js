// SPDX-License-Identifier: GPL-2.0-or-later
// daemon.js: the extension's link to laptop-moded on the system bus.
// Owns the name watch, the proxy and today's wakers; never decides what a
// state looks like (words.js) nor shows anything (extension.js).
//
// Everything follows the daemon: its name appearing and vanishing
// (Gio.bus_watch_name), its PropertiesChanged (the proxy's property cache),
// nothing on a timer. As laptop-mode-tray does (client/tray/lm-tray-app.c),
// a new owner of the name is a new daemon: what the old one said or allowed
// counts no more.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';

import {lastExplanations, topWakers} from './words.js';

// common/lm-names.h
const BUS_NAME = 'org.laptopmode.LaptopMode1';
const OBJECT_PATH = '/org/laptopmode/LaptopMode1';
const INTERFACE = 'org.laptopmode.LaptopMode1';

// The part of dbus/org.laptopmode.LaptopMode1.xml this extension uses, with
// the same names and types; check-interface.py holds it to the XML at build
// time (meson test gnome-shell-interface). A subset rather than the
// installed XML: the file in /usr/share/dbus-1/interfaces is 770 lines of
// comments to parse in the compositor at every enable, and a member missing
// here would be caught by that test, not by a user.
const INTERFACE_XML = `<node>
  <interface name="${INTERFACE}">
    <property name="Version" type="s" access="read"/>
    <property name="Active" type="b" access="read"/>
    <property name="Mode" type="s" access="read"/>
    <property name="Reason" type="s" access="read"/>
    <property name="MaxLostWork" type="u" access="read"/>
    <property name="Inhibitors" type="a(ssu)" access="read"/>
    <property name="LedgerSummary" type="a{sa{sv}}" access="read"/>
    <method name="Start"/>
    <method name="Stop"/>
    <method name="SetMode">
      <arg name="mode" type="s" direction="in"/>
    </method>
    <method name="Configure">
      <arg name="settings" type="a{sv}" direction="in"/>
    </method>
    <method name="GetLedgerPage">
      <arg name="since_us" type="t" direction="in"/>
      <arg name="until_us" type="t" direction="in"/>
      <arg name="cursor" type="s" direction="in"/>
      <arg name="limit" type="u" direction="in"/>
      <arg name="records" type="aa{sv}" direction="out"/>
      <arg name="next_cursor" type="s" direction="out"/>
    </method>
  </interface>
</node>`;

const INTERFACE_INFO = Gio.DBusNodeInfo.new_for_xml(INTERFACE_XML).interfaces[0];

// GetLedgerPage: at most 250 records a page (the daemon's bound); a busy
// day is a few pages, and no menu needs more than these.
const LEDGER_PAGE = 250;
const LEDGER_MAX_PAGES = 64;

// A call that may show polkit's dialog waits for the person (the daemon
// gives up after 300 s); the others take D-Bus's default.
const INTERACTIVE_TIMEOUT_MS = GLib.MAXINT32;

/**
 * [midnight, next midnight) of the local day, in µs since the epoch, as
 * GetLedgerPage's range: the whole day, since a spin-up's time comes from
 * the kernel's clock and may run a little ahead of ours (as the tray does).
 *
 * @returns {[number, number]}
 */
function todayRange() {
    const now = GLib.DateTime.new_now_local();
    const midnight = GLib.DateTime.new_local(now.get_year(), now.get_month(),
        now.get_day_of_month(), 0, 0, 0);
    const next = midnight.add_days(1);
    return [midnight.to_unix() * 1000000, next.to_unix() * 1000000];
}

/**
 * @param {Error} error - what a call threw
 * @returns {boolean} the call was cancelled: the daemon left, or we did
 */
export function isCancelled(error) {
    return error instanceof GLib.Error &&
        error.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED);
}

/**
 * @param {Error} error - what a call threw
 * @returns {boolean} polkit refused (the daemon maps every refusal to this)
 */
export function isDenied(error) {
    return error instanceof GLib.Error &&
        error.matches(Gio.DBusError, Gio.DBusError.ACCESS_DENIED);
}

export const Daemon = GObject.registerClass({
    Signals: {
        // The state changed: the name, a property, or today's wakers.
        'changed': {},
        // LedgerSummary changed (a spin-up, a sleep): today's wakers may
        // have too; whoever shows them calls refreshWakers().
        'summary-changed': {},
    },
}, class Daemon extends GObject.Object {
    _init() {
        super._init();
        this._proxy = null;
        this._cancellable = new Gio.Cancellable();
        this._forget();
        this._watchId = Gio.bus_watch_name(Gio.BusType.SYSTEM, BUS_NAME,
            Gio.BusNameWatcherFlags.NONE,
            connection => this._appeared(connection),
            () => this._vanished());
    }

    /**
     * What the daemon says now, for words.js. Unavailable until the proxy
     * has the properties, so a half-read daemon is never shown.
     *
     * @returns {object}
     */
    get state() {
        const p = this._proxy;
        const get = (name, fallback) =>
            p?.get_cached_property(name)?.recursiveUnpack() ?? fallback;
        return {
            available: p !== null,
            active: get('Active', false),
            mode: get('Mode', ''),
            reason: get('Reason', ''),
            maxLostWork: get('MaxLostWork', 0),
            inhibitors: get('Inhibitors', []),
            summary: get('LedgerSummary', {}),
            wakers: this._wakers,
            explanations: this._explanations,
            monitor: this._monitor,
        };
    }

    _forget() {
        this._cancellable.cancel();
        this._cancellable = new Gio.Cancellable();
        if (this._proxy)
            this._proxy.disconnect(this._propsId);
        this._proxy = null;
        this._propsId = 0;
        // Whether this user may see processes (polkit's monitor action), as
        // the daemon last answered a GetLedgerPage made without a dialog.
        this._monitor = 'unknown';
        this._wakers = null;
        this._explanations = null;
        this._wakersStale = true;
        this._ledgerBusy = false;
        this._ledgerAgain = false;
    }

    async _appeared(connection) {
        this._forget();
        const cancellable = this._cancellable;
        // Never starts the daemon: the watch says it is there, and a call
        // racing its exit must fail rather than activate it again.
        const proxy = new Gio.DBusProxy({
            g_connection: connection,
            g_name: BUS_NAME,
            g_object_path: OBJECT_PATH,
            g_interface_name: INTERFACE,
            g_interface_info: INTERFACE_INFO,
            g_flags: Gio.DBusProxyFlags.DO_NOT_AUTO_START,
        });
        try {
            // Promisified by GNOME Shell (js/ui/environment.js, 45 to 48).
            await proxy.init_async(GLib.PRIORITY_DEFAULT, cancellable);
        } catch (e) {
            if (!isCancelled(e))
                console.warn(`laptop-mode: cannot talk to laptop-moded: ${e.message}`);
            return;
        }
        if (cancellable.is_cancelled())
            return;
        this._proxy = proxy;
        this._propsId = proxy.connect('g-properties-changed',
            (p, changed, invalidated) => this._propertiesChanged(changed, invalidated));
        this.emit('changed');
    }

    _vanished() {
        this._forget();
        this.emit('changed');
    }

    _propertiesChanged(changed, invalidated) {
        // LedgerSummary changes with each spin-up and sleep: today's
        // wakers may have too. Read again only when someone looks.
        const summary = changed.lookup_value('LedgerSummary', null) !== null ||
            invalidated.includes('LedgerSummary');
        if (summary)
            this._wakersStale = true;
        this.emit('changed');
        if (summary)
            this.emit('summary-changed');
    }

    /**
     * Calls @method on the daemon.
     *
     * @param {string} method - the method's name
     * @param {GLib.Variant|null} params - its arguments
     * @param {boolean} interactive - a person just asked: polkit may show
     *   its dialog rather than refuse (and the call may take that long).
     *   Calls the extension makes on its own never make a dialog appear.
     * @returns {Promise<GLib.Variant>}
     */
    call(method, params, interactive) {
        if (this._proxy === null) {
            return Promise.reject(new GLib.Error(Gio.DBusError,
                Gio.DBusError.SERVICE_UNKNOWN, 'laptop-moded is not running'));
        }
        // Gio.DBusConnection.prototype.call is promisified by GNOME Shell.
        return this._proxy.g_connection.call(BUS_NAME, OBJECT_PATH, INTERFACE,
            method, params, null,
            interactive
                ? Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION
                : Gio.DBusCallFlags.NONE,
            interactive ? INTERACTIVE_TIMEOUT_MS : -1,
            this._cancellable);
    }

    /**
     * Reads today's wakers if LedgerSummary changed since they were read,
     * or the last read failed: called when the menu opens and, while it is
     * open, on summary-changed; never on a timer, so a failing read is not
     * retried in a loop. Never asks with a dialog, and not again once
     * refused (until the daemon restarts), as the tray does.
     */
    refreshWakers() {
        if (this._proxy === null || this._monitor === 'denied' || !this._wakersStale)
            return;
        if (this._ledgerBusy) {
            this._ledgerAgain = true;
            return;
        }
        this._ledgerBusy = true;
        this._wakersStale = false;
        const [since, until] = todayRange();
        this._readPages(since, until, '', [], 0, this._cancellable);
    }

    // One page, then the next: one call at a time, as the daemon builds a
    // page under its connection's lock.
    async _readPages(since, until, cursor, records, pages, cancellable) {
        let reply;
        try {
            reply = await this.call('GetLedgerPage',
                new GLib.Variant('(ttsu)', [since, until, cursor, LEDGER_PAGE]), false);
        } catch (e) {
            if (isCancelled(e))
                return;
            if (isDenied(e)) {
                this._monitor = 'denied';
                this._wakers = null;
                this._explanations = null;
            } else {
                // Busy, or past the budget (.LimitExceeded): the next look
                // tries again. Not a problem of this machine: debug only.
                console.debug(`laptop-mode: GetLedgerPage: ${e.message}`);
                this._wakersStale = true;
            }
            this._ledgerDone();
            return;
        }
        if (cancellable.is_cancelled())
            return;
        const [page, next] = reply.recursiveUnpack();
        records.push(...page);
        if (next !== '' && pages + 1 < LEDGER_MAX_PAGES) {
            this._readPages(since, until, next, records, pages + 1, cancellable);
            return;
        }
        this._monitor = 'allowed';
        this._wakers = topWakers(records);
        this._explanations = lastExplanations(records);
        this._ledgerDone();
    }

    _ledgerDone() {
        this._ledgerBusy = false;
        this.emit('changed');
        if (this._ledgerAgain) {
            this._ledgerAgain = false;
            this.refreshWakers();
        }
    }

    destroy() {
        if (this._watchId) {
            Gio.bus_unwatch_name(this._watchId);
            this._watchId = 0;
        }
        this._forget();
    }
});
