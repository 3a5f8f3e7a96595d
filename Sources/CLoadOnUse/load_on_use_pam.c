// Linux-PAM, loaded on first use (see include/load_on_use.h). The definitions are hidden, so
// the libraries PAM loads (its modules) never bind to them.
#pragma GCC visibility push(hidden)
#include <security/pam_appl.h>
#pragma GCC visibility pop
#include "load_on_use.h"

static struct load_on_use_library pam_library = LOAD_ON_USE_LIBRARY("libpam.so.0");

static void open_pam(void) { pam_library.handle = dlopen(pam_library.file, RTLD_NOW | RTLD_LOCAL); }

__attribute__((visibility("hidden")))
int pam_start_confdir(const char *service_name, const char *user, const struct pam_conv *pam_conversation,
                      const char *confdir, pam_handle_t **pamh) {
    LOAD_ON_USE_RESOLVE(pam_library, open_pam, pam_start_confdir)
    if (resolved_pam_start_confdir == NULL) {
        *pamh = NULL;
        return PAM_ABORT;
    }
    return resolved_pam_start_confdir(service_name, user, pam_conversation, confdir, pamh);
}

__attribute__((visibility("hidden")))
int pam_end(pam_handle_t *pamh, int pam_status) {
    LOAD_ON_USE_RESOLVE(pam_library, open_pam, pam_end)
    return resolved_pam_end == NULL ? PAM_ABORT : resolved_pam_end(pamh, pam_status);
}

__attribute__((visibility("hidden")))
int pam_authenticate(pam_handle_t *pamh, int flags) {
    LOAD_ON_USE_RESOLVE(pam_library, open_pam, pam_authenticate)
    return resolved_pam_authenticate == NULL ? PAM_ABORT : resolved_pam_authenticate(pamh, flags);
}

__attribute__((visibility("hidden")))
int pam_acct_mgmt(pam_handle_t *pamh, int flags) {
    LOAD_ON_USE_RESOLVE(pam_library, open_pam, pam_acct_mgmt)
    return resolved_pam_acct_mgmt == NULL ? PAM_ABORT : resolved_pam_acct_mgmt(pamh, flags);
}
