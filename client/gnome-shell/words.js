// SPDX-License-Identifier: GPL-2.0-or-later
// words.js: what the extension says about laptop-moded's state, as pure
// functions of that state. Owns every sentence the toggle, the menu and the
// notifications show; never talks to a bus and keeps no state.
//
// The rules and words follow laptop-mode-tray's (client/tray/lm-tray-view.c)
// so that both clients say the same thing: the same reason words, the same
// "another user's process" for a spin-up the daemon sends without a name,
// the same "N min" / "N s" durations and the same four-disk limit.

import {gettext as _, ngettext} from 'resource:///org/gnome/shell/extensions/extension.js';

// common/lm-names.h: the Reason property's words.
export const Reason = Object.freeze({
    MANUAL: 'manual',
    ON_BATTERY: 'on-battery',
    AC: 'ac',
    POWER_SAVER: 'power-saver',
    LOW_BATTERY: 'low-battery',
    INHIBITED: 'inhibited',
});

// common/lm-names.h LM_OTHER_USER_TEXT: how a spin-up of another user's
// process is shown; the daemon sends it without a name (OtherUser true).
export const OTHER_USER = "another user's process";

// As LM_TRAY_VIEW_MAX_DISKS: the rest is the report's business.
export const MAX_DISKS = 4;
// Wakers named per disk.
export const MAX_WAKERS = 3;

// The polkit actions a refusal names (polkit/org.laptopmode.LaptopMode1.policy).
const ACTION_SWITCH = 'org.laptopmode.LaptopMode1.switch';
const ACTION_CONFIGURE = 'org.laptopmode.LaptopMode1.configure';
export const ACTION_MONITOR = 'org.laptopmode.LaptopMode1.monitor';

/**
 * Fills %s and %d in a translated template, in order; a template with
 * placeholders keeps them translatable as one sentence.
 *
 * @param {string} template - the translated text
 * @param {...any} args - the values
 * @returns {string}
 */
export function fill(template, ...args) {
    let i = 0;
    return template.replace(/%[sd]/g, () => `${args[i++] ?? ''}`);
}

/**
 * Outside text (a program's name, an inhibitor's reason) as safe to show:
 * control characters become \xNN, as lm_escape writes them, so that no
 * program can make a label or a notification lie by its name.
 *
 * @param {string|null|undefined} text - what the daemon sent
 * @param {string} unknown - shown when it sent nothing
 * @returns {string}
 */
export function safe(text, unknown = '?') {
    if (typeof text !== 'string' || text === '')
        return unknown;
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u001f\u007f]/g,
        c => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/**
 * "10 min" or "45 s", as the tray says it.
 *
 * @param {number} seconds - a duration
 * @returns {string}
 */
export function duration(seconds) {
    if (seconds >= 60 && seconds % 60 === 0)
        return fill(_('%d min'), seconds / 60);
    return fill(_('%d s'), seconds);
}

/**
 * The toggle's subtitle: the state in a word or two. What holds laptop mode
 * off comes first, whatever the mode, as the daemon's Reason says.
 *
 * @param {object} state - Daemon.state
 * @returns {string}
 */
export function subtitle(state) {
    if (!state.available)
        return _('Unavailable');
    if (state.reason === Reason.INHIBITED) {
        const [who] = state.inhibitors[0] ?? [];
        return who ? fill(_('Inhibited by %s'), safe(who)) : _('Inhibited');
    }
    if (state.reason === Reason.LOW_BATTERY)
        return _('Low battery');
    if (!state.active)
        return _('Off');
    // Mode auto switches it off at the plug: say so, or the user wonders
    // why it went off.
    if (state.mode === 'auto' && state.reason === Reason.ON_BATTERY)
        return _('On until plugged in');
    if (state.mode === 'auto' && state.reason === Reason.POWER_SAVER)
        return _('On with power saver');
    return _('On');
}

/**
 * The mode's name in the menu.
 *
 * @param {string} mode - "auto", "on" or "off"
 * @returns {string}
 */
export function modeLabel(mode) {
    switch (mode) {
    case 'auto':
        return _('Automatic (on while on battery)');
    case 'on':
        return _('On');
    case 'off':
        return _('Off');
    default:
        return safe(mode);
    }
}

/**
 * Why laptop mode is on or off, in the tray's words.
 *
 * @param {string} reason - the Reason property
 * @returns {string}
 */
function reasonWords(reason) {
    switch (reason) {
    case Reason.MANUAL:
        return _('set by hand');
    case Reason.ON_BATTERY:
        return _('running on battery');
    case Reason.AC:
        return _('running on AC power');
    case Reason.POWER_SAVER:
        return _('power saver profile');
    case Reason.LOW_BATTERY:
        return _('battery low');
    case Reason.INHIBITED:
        return _('held off by a program');
    default:
        return safe(reason, _('unknown'));
    }
}

/**
 * The menu header's subtitle and the lines under it: "Mode: auto (running
 * on battery)" and who holds it off. (The max lost work is its submenu's
 * label: lostWork().)
 *
 * @param {object} state - Daemon.state
 * @returns {string[]}
 */
export function details(state) {
    if (!state.available)
        return [_('laptop-moded is not running.')];
    const lines = [fill(_('Mode: %s (%s)'), safe(state.mode, _('unknown')),
        reasonWords(state.reason))];
    if (state.inhibitors.length > 0) {
        const [who, why] = state.inhibitors[0];
        let held = fill(_('Held off by %s: %s'), safe(who), safe(why, ''));
        if (state.inhibitors.length > 1) {
            held += fill(ngettext(' (and %d more)', ' (and %d more)',
                state.inhibitors.length - 1), state.inhibitors.length - 1);
        }
        lines.push(held);
    }
    return lines;
}

/**
 * The max lost work submenu's label.
 *
 * @param {number} seconds - MaxLostWork
 * @returns {string}
 */
export function lostWork(seconds) {
    return fill(_('Max lost work: %s'), duration(seconds));
}

/**
 * Who woke each disk today, most often first, from GetLedgerPage's records
 * (unpacked a{sv} objects). A spin-up the daemon sent without a name is
 * another user's process; ties go to the name first in byte order, as the
 * tray's lm_tray_view_top_wakers.
 *
 * @param {object[]} records - the ledger's records of today
 * @returns {Map<string, Array<[string, number]>>} disk to [name, count] pairs
 */
export function topWakers(records) {
    const counts = new Map();
    for (const record of records) {
        if (record.Kind !== 'spinup' || typeof record.Disk !== 'string')
            continue;
        const who = record.OtherUser ? OTHER_USER : record.Comm;
        if (typeof who !== 'string')
            continue;
        if (!counts.has(record.Disk))
            counts.set(record.Disk, new Map());
        const perDisk = counts.get(record.Disk);
        perDisk.set(who, (perDisk.get(who) ?? 0) + 1);
    }
    const top = new Map();
    for (const [disk, perDisk] of counts) {
        const sorted = [...perDisk].sort(([a, na], [b, nb]) => {
            if (na !== nb)
                return nb - na;
            if (a === b)
                return 0;
            return a < b ? -1 : 1;
        });
        top.set(disk, sorted.slice(0, MAX_WAKERS));
    }
    return top;
}

/**
 * The explanation of each disk's last spin-up today: the record's
 * Explanation where the daemon's table of known causes had one, else null
 * (an unknown cause, or another user's, whose records carry none).
 *
 * @param {object[]} records - the ledger's records of today
 * @returns {Map<string, string|null>} disk to the sentence
 */
export function lastExplanations(records) {
    const last = new Map();
    const times = new Map();
    for (const record of records) {
        if (record.Kind !== 'spinup' || typeof record.Disk !== 'string')
            continue;
        const time = Number(record.Time ?? 0);
        if (!times.has(record.Disk) || time >= times.get(record.Disk)) {
            times.set(record.Disk, time);
            last.set(record.Disk, typeof record.Explanation === 'string'
                ? record.Explanation : null);
        }
    }
    return last;
}

/**
 * Today's lines per disk: "sda: 6 spin-ups today, asleep 71 %" and, for a
 * user who may see processes, "Woken by firefox ×3, cron ×2" and what the
 * last wake-up was ("Last: smartd checking the disk's health …"). Disks in
 * name order, at most MAX_DISKS, then how many more there are.
 *
 * @param {object} summary - LedgerSummary, unpacked: disk to its keys
 * @param {Map|null} wakers - topWakers(), null when not known
 * @param {string} monitor - "allowed", "denied" or "unknown"
 * @param {Map|null} explanations - lastExplanations(), null when not known
 * @returns {Array<{text: string, secondary: boolean}>}
 */
export function today(summary, wakers, monitor, explanations = null) {
    const disks = Object.keys(summary ?? {}).sort();
    if (disks.length === 0)
        return [{text: _('No disk watched today'), secondary: true}];
    const lines = [];
    for (const disk of disks.slice(0, MAX_DISKS)) {
        const day = summary[disk] ?? {};
        const spinups = Number(day.SpinUpsToday ?? 0);
        const share = Number.isFinite(day.AsleepShareToday)
            ? Math.min(Math.max(day.AsleepShareToday, 0), 1) : 0;
        const template = ngettext('%s: %d spin-up today, asleep %d %%',
            '%s: %d spin-ups today, asleep %d %%', spinups);
        const text = fill(template, safe(disk), spinups, Math.round(share * 100));
        lines.push({text: text.replace('%%', '%'), secondary: false});
        const top = wakers?.get(disk);
        if (monitor === 'allowed' && spinups > 0 && top && top.length > 0) {
            const names = top.map(([who, n]) => `${safe(who)} ×${n}`).join(', ');
            lines.push({text: fill(_('Woken by %s'), names), secondary: true});
        }
        const why = explanations?.get(disk);
        if (monitor === 'allowed' && spinups > 0 && typeof why === 'string')
            lines.push({text: fill(_('Last: %s'), safe(why)), secondary: true});
    }
    if (disks.length > MAX_DISKS) {
        const more = disks.length - MAX_DISKS;
        lines.push({
            text: fill(ngettext('and %d more disk (laptop-modectl report)',
                'and %d more disks (laptop-modectl report)', more), more),
            secondary: true,
        });
    }
    if (monitor === 'denied') {
        lines.push({
            text: fill(_('Who woke them: not allowed (needs %s)'), ACTION_MONITOR),
            secondary: true,
        });
    }
    return lines;
}

// What each call does, for a refusal's or failure's notification.
const CALLS = {
    Start: [ACTION_SWITCH, () => _('switch laptop mode on')],
    Stop: [ACTION_SWITCH, () => _('switch laptop mode off')],
    SetMode: [ACTION_SWITCH, () => _('change the laptop mode setting')],
    Configure: [ACTION_CONFIGURE, () => _('change how much work a crash may lose')],
};

/**
 * A call failed: the notification's title and body. @denied when polkit
 * refused (AccessDenied); @message is the daemon's, which names the action.
 *
 * @param {string} method - the D-Bus method
 * @param {boolean} denied - polkit said no
 * @param {string} message - the error's message, remote prefix stripped
 * @returns {[string, string]}
 */
export function callFailed(method, denied, message) {
    const [action, what] = CALLS[method] ?? ['unknown', () => method];
    if (denied) {
        return [
            fill(_('Not allowed to %s'), what()),
            fill(_('Your account lacks the right %s. An administrator can grant it with a polkit rule.\n%s'),
                action, safe(message, '')),
        ];
    }
    return [fill(_('Could not %s'), what()), safe(message, '')];
}
