// SPDX-License-Identifier: GPL-2.0-or-later
// report.js: today's HTML report, written by laptop-modectl and opened in
// the desktop's browser, as laptop-mode-tray does (client/tray/lm-tray-report.c):
// `laptop-modectl report --html FILE --since 1d`. Never renders anything
// itself and never runs a shell.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

// The tray's file name (LM_TRAY_REPORT_FILE): both write the same report.
const REPORT_FILE = 'laptop-moded-report.html';
// Enough of laptop-modectl's complaint for a notification.
const MAX_MESSAGE = 400;

export class ReportError extends Error {
    /**
     * @param {string} step - "write" or "open": what failed
     * @param {string} message - why
     */
    constructor(step, message) {
        super(message);
        this.step = step;
    }
}

/**
 * @param {Gio.Subprocess} proc - laptop-modectl
 * @param {Gio.Cancellable} cancellable - cancels the wait (and kills it)
 * @returns {Promise<string>} what it wrote on stderr
 */
function communicate(proc, cancellable) {
    return new Promise((resolve, reject) => {
        proc.communicate_utf8_async(null, cancellable, (p, result) => {
            try {
                const [, , stderr] = p.communicate_utf8_finish(result);
                resolve(stderr ?? '');
            } catch (e) {
                reject(e);
            }
        });
    });
}

/**
 * @param {string} uri - the report
 * @param {Gio.AppLaunchContext} context - the shell's launch context
 * @returns {Promise<void>}
 */
function launch(uri, context) {
    return new Promise((resolve, reject) => {
        Gio.AppInfo.launch_default_for_uri_async(uri, context, null, (o, result) => {
            try {
                Gio.AppInfo.launch_default_for_uri_finish(result);
                resolve();
            } catch (e) {
                reject(e);
            }
        });
    });
}

/**
 * Writes today's report into $XDG_RUNTIME_DIR and opens it.
 *
 * @param {Gio.Cancellable} cancellable - the extension is going away
 * @returns {Promise<void>} rejects with a ReportError saying what failed
 */
export async function openReport(cancellable) {
    const ctl = GLib.find_program_in_path('laptop-modectl');
    if (ctl === null)
        throw new ReportError('write', 'laptop-modectl is not on PATH; it is installed with laptop-moded');

    // The user's own 0700 runtime directory: no other user can plant a
    // link there. laptop-modectl writes the file 0600 by rename.
    const path = GLib.build_filenamev([GLib.get_user_runtime_dir(), REPORT_FILE]);
    let proc, stderr;
    try {
        proc = Gio.Subprocess.new(
            [ctl, 'report', '--html', path, '--since', '1d'],
            Gio.SubprocessFlags.STDOUT_SILENCE | Gio.SubprocessFlags.STDERR_PIPE);
        stderr = await communicate(proc, cancellable);
    } catch (e) {
        if (e instanceof GLib.Error &&
            e.matches(Gio.IOErrorEnum, Gio.IOErrorEnum.CANCELLED)) {
            proc?.force_exit();
            throw e;
        }
        throw new ReportError('write', `cannot run ${ctl}: ${e.message}`);
    }
    if (!proc.get_successful()) {
        let said = stderr.trim();
        if (said.length > MAX_MESSAGE)
            said = `${said.slice(0, MAX_MESSAGE)}…`;
        const how = proc.get_if_signaled()
            ? `was killed by signal ${proc.get_term_sig()}`
            : `failed with exit status ${proc.get_exit_status()}`;
        throw new ReportError('write', `${ctl} report ${how}${said ? `: ${said}` : ''}`);
    }

    // What is opened is the file laptop-modectl wrote: a regular file of
    // this user, not a link put in its place since.
    const file = Gio.File.new_for_path(path);
    let info;
    try {
        info = file.query_info('standard::type,owner::user',
            Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, cancellable);
    } catch (e) {
        throw new ReportError('write', e.message);
    }
    if (info.get_file_type() !== Gio.FileType.REGULAR ||
        info.get_attribute_string('owner::user') !== GLib.get_user_name())
        throw new ReportError('write', `${path} is not a file of your own; remove it and try again`);

    try {
        await launch(file.get_uri(), global.create_app_launch_context(0, -1));
    } catch (e) {
        throw new ReportError('open', `no browser opened ${path}: ${e.message}`);
    }
}
