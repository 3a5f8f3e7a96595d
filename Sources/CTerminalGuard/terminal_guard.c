#define _GNU_SOURCE
#include "terminal_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static const int guarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
#define GUARDED_COUNT (sizeof guarded_signals / sizeof guarded_signals[0])

static pthread_mutex_t prompt_lock = PTHREAD_MUTEX_INITIALIZER;
static int guarded_fd = -1;
static struct termios saved_mode;
static volatile sig_atomic_t mode_changed = 0;
static volatile sig_atomic_t interrupting_signal = 0;
static struct sigaction previous_actions[GUARDED_COUNT];
// The handler may run on any thread (the prompting one often blocks these signals, as
// dispatch and Swift concurrency threads do): it wakes the prompt through this pipe.
static int wake_pipe[2] = {-1, -1};
static int installed[GUARDED_COUNT];

static void restore_on_signal(int signal_number) {
    int saved_errno = errno;
    if (mode_changed) {
        (void)tcsetattr(guarded_fd, TCSANOW, &saved_mode);  // async-signal-safe
        mode_changed = 0;
    }
    if (interrupting_signal == 0) interrupting_signal = signal_number;
    if (wake_pipe[1] >= 0) (void)write(wake_pipe[1], "!", 1);
    errno = saved_errno;
}

int keysmith_terminal_quiet_begin(int fd) {
    pthread_mutex_lock(&prompt_lock);
    struct termios mode;
    if (tcgetattr(fd, &mode) != 0) {
        int saved_errno = errno;
        pthread_mutex_unlock(&prompt_lock);
        errno = saved_errno;
        return -1;
    }
    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        int saved_errno = errno;
        pthread_mutex_unlock(&prompt_lock);
        errno = saved_errno;
        return -1;
    }
    guarded_fd = fd;
    saved_mode = mode;
    interrupting_signal = 0;
    mode_changed = 0;
    for (size_t i = 0; i < GUARDED_COUNT; i++) {
        installed[i] = 0;
        struct sigaction current;
        if (sigaction(guarded_signals[i], NULL, &current) != 0) continue;
        if (current.sa_handler == SIG_IGN) continue;  // an ignored signal stays ignored
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = restore_on_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = 0;  // no SA_RESTART: the blocked read returns EINTR
        if (sigaction(guarded_signals[i], &action, &previous_actions[i]) == 0) installed[i] = 1;
    }
    struct termios quiet = mode;
    quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK | ECHONL | ICANON | ISIG | IEXTEN);
    quiet.c_cc[VMIN] = 1;
    quiet.c_cc[VTIME] = 0;
    mode_changed = 1;
    if (tcsetattr(fd, TCSANOW, &quiet) != 0) {
        int saved_errno = errno;
        mode_changed = 0;
        for (size_t i = 0; i < GUARDED_COUNT; i++) {
            if (installed[i]) sigaction(guarded_signals[i], &previous_actions[i], NULL);
        }
        guarded_fd = -1;
        close(wake_pipe[0]);
        close(wake_pipe[1]);
        wake_pipe[0] = wake_pipe[1] = -1;
        pthread_mutex_unlock(&prompt_lock);
        errno = saved_errno;
        return -1;
    }
    return 0;
}

int keysmith_terminal_read_byte(unsigned char *byte) {
    for (;;) {
        if (interrupting_signal) return -2;
        struct pollfd watched[2] = {{guarded_fd, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
        int ready = poll(watched, 2, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (interrupting_signal) return -2;
        if (watched[0].revents != 0) {
            ssize_t count = read(guarded_fd, byte, 1);
            if (count < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            return (int)count;
        }
    }
}

int keysmith_terminal_interrupting_signal(void) { return interrupting_signal; }

int keysmith_terminal_quiet_end(void) {
    if (mode_changed) {
        (void)tcsetattr(guarded_fd, TCSANOW, &saved_mode);
        mode_changed = 0;
    }
    for (size_t i = 0; i < GUARDED_COUNT; i++) {
        if (installed[i]) sigaction(guarded_signals[i], &previous_actions[i], NULL);
        installed[i] = 0;
    }
    int signal_number = interrupting_signal;
    interrupting_signal = 0;
    guarded_fd = -1;
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    wake_pipe[0] = wake_pipe[1] = -1;
    memset(&saved_mode, 0, sizeof saved_mode);
    pthread_mutex_unlock(&prompt_lock);
    // Sent to the process, not this thread: the prompting thread often blocks these signals.
    if (signal_number != 0) kill(getpid(), signal_number);
    return signal_number;
}
