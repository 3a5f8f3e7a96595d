#include "load_on_use.h"

__attribute__((visibility("hidden")))
void *load_on_use_symbol(struct load_on_use_library *library, void (*open)(void), const char *name) {
    pthread_once(&library->once, open);
    if (library->handle == NULL) return NULL;
    return dlsym(library->handle, name);
}
