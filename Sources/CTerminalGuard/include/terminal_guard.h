#ifndef KEYSMITH_TERMINAL_GUARD_H
#define KEYSMITH_TERMINAL_GUARD_H
// Echo off on a terminal while a secret is typed, with the terminal's own mode put back on
// every way out: the normal return, and the signals that end or stop a process (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT, SIGTSTP) arriving meanwhile. A signal handler cannot be
// written safely in Swift, hence this small C file.

/// Takes the process-wide prompt lock, saves the mode of `fd`, installs the restoring signal
/// handlers and switches `fd` to non-canonical mode with echo and terminal signals off
/// (Ctrl-C and Ctrl-D arrive as bytes). Returns 0, or -1 with errno set (then nothing was
/// changed and the lock is released).
int keysmith_terminal_quiet_begin(int fd);

/// Reads one byte from the terminal given to `keysmith_terminal_quiet_begin`. Returns 1, 0 at
/// end of input, -1 on a read error (errno set), or -2 when one of the guarded signals arrived
/// (on any thread).
int keysmith_terminal_read_byte(unsigned char *byte);

/// The signal that arrived since `keysmith_terminal_quiet_begin`, or 0.
int keysmith_terminal_interrupting_signal(void);

/// Puts the saved mode back, reinstalls the previous signal handlers and releases the lock.
/// When a signal arrived meanwhile it is sent to the process again, so the process reacts to
/// it as it would have without the prompt. Returns that signal, or 0.
int keysmith_terminal_quiet_end(void);
#endif
