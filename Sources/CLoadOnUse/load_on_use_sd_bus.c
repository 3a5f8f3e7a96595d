// sd-bus (libsystemd), loaded on first use (see include/load_on_use.h): the calls the
// fingerprint authenticator makes to reach fprintd. The definitions are hidden, so libsystemd
// itself never binds to them.
#pragma GCC visibility push(hidden)
#include <systemd/sd-bus.h>
#pragma GCC visibility pop
#include <errno.h>
#include "load_on_use.h"

static struct load_on_use_library systemd_library = LOAD_ON_USE_LIBRARY("libsystemd.so.0");

static void open_systemd(void) { systemd_library.handle = dlopen(systemd_library.file, RTLD_NOW | RTLD_LOCAL); }

__attribute__((visibility("hidden")))
int sd_bus_open_system(sd_bus **ret) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_open_system)
    return resolved_sd_bus_open_system == NULL ? -ELIBACC : resolved_sd_bus_open_system(ret);
}

__attribute__((visibility("hidden")))
int sd_bus_new(sd_bus **ret) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_new)
    return resolved_sd_bus_new == NULL ? -ELIBACC : resolved_sd_bus_new(ret);
}

__attribute__((visibility("hidden")))
int sd_bus_set_address(sd_bus *bus, const char *address) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_set_address)
    return resolved_sd_bus_set_address == NULL ? -ELIBACC : resolved_sd_bus_set_address(bus, address);
}

__attribute__((visibility("hidden")))
int sd_bus_set_bus_client(sd_bus *bus, int b) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_set_bus_client)
    return resolved_sd_bus_set_bus_client == NULL ? -ELIBACC : resolved_sd_bus_set_bus_client(bus, b);
}

__attribute__((visibility("hidden")))
int sd_bus_start(sd_bus *bus) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_start)
    return resolved_sd_bus_start == NULL ? -ELIBACC : resolved_sd_bus_start(bus);
}

__attribute__((visibility("hidden")))
sd_bus *sd_bus_unref(sd_bus *bus) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_unref)
    return resolved_sd_bus_unref == NULL ? NULL : resolved_sd_bus_unref(bus);
}

__attribute__((visibility("hidden")))
sd_bus *sd_bus_flush_close_unref(sd_bus *bus) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_flush_close_unref)
    return resolved_sd_bus_flush_close_unref == NULL ? NULL : resolved_sd_bus_flush_close_unref(bus);
}

__attribute__((visibility("hidden")))
int sd_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_call)
    return resolved_sd_bus_call == NULL ? -ELIBACC : resolved_sd_bus_call(bus, m, usec, ret_error, reply);
}

__attribute__((visibility("hidden")))
int sd_bus_process(sd_bus *bus, sd_bus_message **r) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_process)
    return resolved_sd_bus_process == NULL ? -ELIBACC : resolved_sd_bus_process(bus, r);
}

__attribute__((visibility("hidden")))
int sd_bus_wait(sd_bus *bus, uint64_t timeout_usec) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_wait)
    return resolved_sd_bus_wait == NULL ? -ELIBACC : resolved_sd_bus_wait(bus, timeout_usec);
}

__attribute__((visibility("hidden")))
sd_bus_slot *sd_bus_slot_unref(sd_bus_slot *slot) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_slot_unref)
    return resolved_sd_bus_slot_unref == NULL ? NULL : resolved_sd_bus_slot_unref(slot);
}

__attribute__((visibility("hidden")))
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_new_method_call)
    return resolved_sd_bus_message_new_method_call == NULL ? -ELIBACC : resolved_sd_bus_message_new_method_call(bus, m, destination, path, interface, member);
}

__attribute__((visibility("hidden")))
sd_bus_message *sd_bus_message_unref(sd_bus_message *m) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_unref)
    return resolved_sd_bus_message_unref == NULL ? NULL : resolved_sd_bus_message_unref(m);
}

__attribute__((visibility("hidden")))
int sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_append_basic)
    return resolved_sd_bus_message_append_basic == NULL ? -ELIBACC : resolved_sd_bus_message_append_basic(m, type, p);
}

__attribute__((visibility("hidden")))
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_read_basic)
    return resolved_sd_bus_message_read_basic == NULL ? -ELIBACC : resolved_sd_bus_message_read_basic(m, type, p);
}

__attribute__((visibility("hidden")))
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_enter_container)
    return resolved_sd_bus_message_enter_container == NULL ? -ELIBACC : resolved_sd_bus_message_enter_container(m, type, contents);
}

__attribute__((visibility("hidden")))
int sd_bus_message_exit_container(sd_bus_message *m) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_message_exit_container)
    return resolved_sd_bus_message_exit_container == NULL ? -ELIBACC : resolved_sd_bus_message_exit_container(m);
}

__attribute__((visibility("hidden")))
int sd_bus_get_property_string(sd_bus *bus, const char *destination, const char *path, const char *interface, const char *member, sd_bus_error *ret_error, char **ret) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_get_property_string)
    return resolved_sd_bus_get_property_string == NULL ? -ELIBACC : resolved_sd_bus_get_property_string(bus, destination, path, interface, member, ret_error, ret);
}

__attribute__((visibility("hidden")))
int sd_bus_match_signal(sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface, const char *member, sd_bus_message_handler_t callback, void *userdata) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_match_signal)
    return resolved_sd_bus_match_signal == NULL ? -ELIBACC : resolved_sd_bus_match_signal(bus, ret, sender, path, interface, member, callback, userdata);
}

__attribute__((visibility("hidden")))
void sd_bus_error_free(sd_bus_error *e) {
    LOAD_ON_USE_RESOLVE(systemd_library, open_systemd, sd_bus_error_free)
    if (resolved_sd_bus_error_free != NULL) resolved_sd_bus_error_free(e);
}
