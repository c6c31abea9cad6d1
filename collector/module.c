/* Loading the GPU backends from their modules (tilecast-cuda.so,
 * tilecast-hip.so). They are loadable modules rather than part of the
 * tilecast command so that predicting, which needs no GPU, neither pays for
 * loading cuBLASLt, cudart and NVRTC at start-up nor fails to start on a
 * machine without the vendor runtime. */
#include "config.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "tc-internal.h"

/* One loaded module. The module links its own copy of the static library,
 * so its tc_error() writes to its own thread-local message: every failing
 * operation copies that message into ours (relay), so that it reaches the
 * run rows and the user like the built-in backends' messages do. */
struct module {
    const char *name;
    void *handle;
    const struct tc_backend_ops *inner;
    const char *(*last_error)(void);
    struct tc_backend_ops ops;
};

static struct module modules[] = {{.name = "cuda"}, {.name = "hip"}};

static int relay(const struct module *m, int err)
{
    const char *msg;

    if (err >= 0)
        return err;
    msg = m->last_error ? m->last_error() : NULL;
    if (msg && *msg)
        return tc_error(err, "%s", msg);
    return tc_error(err, "%s backend: %s", m->name, tc_strerror(err));
}

/* The forwarding operations of module i (the operations take no context
 * that would tell which module they belong to). */
#define FORWARD(i)                                                                                 \
    static int open_##i(int device, struct tc_backend **out, struct tc_backend_info *info)         \
    {                                                                                              \
        return relay(&modules[i], modules[i].inner->open(device, out, info));                      \
    }                                                                                              \
    static int prepare_##i(struct tc_backend *b, const struct tc_shape *s,                         \
                           struct tc_outcome *outcome)                                             \
    {                                                                                              \
        return relay(&modules[i], modules[i].inner->prepare(b, s, outcome));                       \
    }                                                                                              \
    static int run_##i(struct tc_backend *b, int reps, struct tc_rep_times *t,                     \
                       struct tc_outcome *outcome)                                                 \
    {                                                                                              \
        return relay(&modules[i], modules[i].inner->run(b, reps, t, outcome));                     \
    }                                                                                              \
    static int compile_check_##i(const char *arch, char *msg, size_t len)                          \
    {                                                                                              \
        return relay(&modules[i], modules[i].inner->compile_check(arch, msg, len));                \
    }

FORWARD(0)
FORWARD(1)

static const struct tc_backend_ops forwarders[] = {
    {.open = open_0, .prepare = prepare_0, .run = run_0, .compile_check = compile_check_0},
    {.open = open_1, .prepare = prepare_1, .run = run_1, .compile_check = compile_check_1},
};

/* Whether this program runs from the build tree (tests, developers) rather
 * than from its installed place: as tc_data_dir() decides. /proc/self/exe
 * first, since dladdr() names the main program by its argv[0]. */
static const char self_anchor;

static bool uninstalled(void)
{
    char self[PATH_MAX], build[PATH_MAX];
    const char *root = TC_BUILD_ROOT;
    Dl_info info;
    size_t n;

    if (!realpath("/proc/self/exe", self) &&
        !(dladdr(&self_anchor, &info) && info.dli_fname && realpath(info.dli_fname, self)))
        return false;
    if (realpath(TC_BUILD_ROOT, build))
        root = build;
    n = strlen(root);
    return strncmp(self, root, n) == 0 && self[n] == '/';
}

int tc_backend_module_path(const char *name, char *buf, size_t len)
{
    const char *env = getenv("TILECAST_MODULE_DIR");
    const char *dir = env && *env     ? env
                      : uninstalled() ? TC_BUILD_ROOT "/collector"
                                      : TC_INSTALL_MODULE_DIR;
    int n = snprintf(buf, len, "%s/tilecast-%s.so", dir, name);

    if (n < 0 || (size_t)n >= len)
        return tc_error(TC_ERR_RANGE, "module path too long: %s/tilecast-%s.so", dir, name);
    return TC_OK;
}

int tc_backend_load(const char *name, const struct tc_backend_ops **out)
{
    char path[PATH_MAX], symbol[64];
    struct module *m = NULL;
    size_t i;
    void *h, *sym;
    int err;

    *out = NULL;
    for (i = 0; i < TC_ARRAY_SIZE(modules); i++)
        if (name && !strcmp(modules[i].name, name))
            m = &modules[i];
    if (!m)
        return tc_error(TC_ERR_INVALID, "unknown backend '%s' (cuda, hip or cpu)",
                        name ? name : "");
    i = (size_t)(m - modules);
    if (m->inner) {
        *out = &m->ops;
        return TC_OK;
    }
    if ((err = tc_backend_module_path(name, path, sizeof(path))) < 0)
        return err;
    /* RTLD_LOCAL: the module's copy of the library stays its own; its only
     * exports are the ops table and tc_last_error. */
    if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
        return tc_error(TC_ERR_DEVICE,
                        "the %s backend is not available: %s; build with -D%s=enabled / "
                        "install the %s runtime",
                        name, dlerror(), name, !strcmp(name, "hip") ? "ROCm" : "CUDA");
    snprintf(symbol, sizeof(symbol), "tc_backend_%s", name);
    m->inner = dlsym(h, symbol);
    /* ISO C has no cast from an object to a function pointer: copy the bits
     * (what POSIX guarantees to work) */
    sym = dlsym(h, "tc_last_error");
    memcpy(&m->last_error, &sym, sizeof(sym));
    if (!m->inner || !m->inner->open || !m->inner->prepare || !m->inner->run || !m->inner->close) {
        m->inner = NULL;
        m->last_error = NULL;
        dlclose(h);
        return tc_error(TC_ERR_DEVICE, "the %s backend is not available: %s has no %s table", name,
                        path, symbol);
    }
    m->handle = h;
    m->ops = *m->inner;
    m->ops.open = forwarders[i].open;
    m->ops.prepare = forwarders[i].prepare;
    m->ops.run = forwarders[i].run;
    m->ops.compile_check = m->inner->compile_check ? forwarders[i].compile_check : NULL;
    *out = &m->ops;
    return TC_OK;
}

bool tc_backend_can_compile(const struct tc_backend_ops *ops)
{
    return ops && ops->compile_check;
}

int tc_backend_compile_check(const struct tc_backend_ops *ops, const char *arch, char *msg,
                             size_t len)
{
    if (!tc_backend_can_compile(ops))
        return tc_error(TC_ERR_UNSUPPORTED, "the %s backend cannot build kernels",
                        ops ? ops->name : "(none)");
    return ops->compile_check(arch, msg, len);
}
