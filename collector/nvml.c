/* Clocks, temperature and power for run provenance, from NVML (NVIDIA) or
 * ROCm SMI (AMD), both opened with dlopen and our own minimal prototypes:
 * the build needs neither nvml.h nor rocm_smi.h, and a machine without the
 * library still collects (the record says "{}"). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "tc-internal.h"

typedef void *nvml_device;
/* nvmlReturn_t is an int enum with 0 = NVML_SUCCESS */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_index_fn)(unsigned int, nvml_device *);
typedef int (*nvml_by_uuid_fn)(const char *, nvml_device *);
typedef int (*nvml_clock_fn)(nvml_device, int, unsigned int *);
typedef int (*nvml_uint_fn)(nvml_device, unsigned int *);
typedef int (*nvml_temp_fn)(nvml_device, int, unsigned int *);
typedef int (*nvml_str_fn)(nvml_device, char *, unsigned int);
typedef int (*nvml_sys_str_fn)(char *, unsigned int);
typedef int (*nvml_u64_fn)(nvml_device, unsigned long long *);

/* NVML enum values (stable ABI) */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

/* dlsym returns an object pointer; ISO C has no cast to a function pointer,
 * so the bits are copied (what POSIX guarantees to work). */
#define LOAD(fn, lib, name)                                                                        \
    do {                                                                                           \
        void *p_ = (lib) ? dlsym((lib), (name)) : NULL;                                            \
        memcpy(&(fn), &p_, sizeof(p_));                                                            \
    } while (0)

void tc_nvml_query(const char *uuid, int index, char *json, size_t len, char *driver,
                   size_t driver_len)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    nvml_init_fn init;
    nvml_init_fn shutdown;
    nvml_by_index_fn by_index;
    nvml_by_uuid_fn by_uuid;
    nvml_clock_fn clock;
    nvml_temp_fn temp;
    nvml_uint_fn power;
    nvml_sys_str_fn drv;
    nvml_u64_fn reasons;
    nvml_device dev = NULL;
    unsigned int sm = 0, mem = 0, t = 0, mw = 0;
    unsigned long long why = 0;
    int have_sm, have_mem, have_t, have_p, have_why;

    LOAD(init, lib, "nvmlInit_v2");
    LOAD(shutdown, lib, "nvmlShutdown");
    LOAD(by_index, lib, "nvmlDeviceGetHandleByIndex_v2");
    LOAD(by_uuid, lib, "nvmlDeviceGetHandleByUUID");
    LOAD(clock, lib, "nvmlDeviceGetClockInfo");
    LOAD(temp, lib, "nvmlDeviceGetTemperature");
    LOAD(power, lib, "nvmlDeviceGetPowerUsage");
    LOAD(drv, lib, "nvmlSystemGetDriverVersion");
    LOAD(reasons, lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    snprintf(json, len, "{}");
    if (!init || !shutdown || init() != 0)
        goto out;
    if (driver && driver_len && drv)
        drv(driver, (unsigned int)driver_len);
    /* CUDA and NVML number devices differently (CUDA_VISIBLE_DEVICES, PCI
     * order): the UUID names the same device in both. */
    if (!((uuid && *uuid && by_uuid && by_uuid(uuid, &dev) == 0) ||
          (by_index && by_index((unsigned int)index, &dev) == 0)))
        goto shut;
    have_sm = clock && clock(dev, NVML_CLOCK_SM, &sm) == 0;
    have_mem = clock && clock(dev, NVML_CLOCK_MEM, &mem) == 0;
    have_t = temp && temp(dev, NVML_TEMPERATURE_GPU, &t) == 0;
    have_p = power && power(dev, &mw) == 0;
    have_why = reasons && reasons(dev, &why) == 0;
    /* unknown values are left out rather than written as zeros */
    {
        size_t used = 0;

        used += (size_t)snprintf(json + used, len - used, "{");
        if (have_sm && used < len)
            used += (size_t)snprintf(json + used, len - used, "\"sm_mhz\":%u,", sm);
        if (have_mem && used < len)
            used += (size_t)snprintf(json + used, len - used, "\"mem_mhz\":%u,", mem);
        if (have_t && used < len)
            used += (size_t)snprintf(json + used, len - used, "\"temp_c\":%u,", t);
        if (have_p && used < len)
            used += (size_t)snprintf(json + used, len - used, "\"power_w\":%.1f,", mw / 1000.0);
        if (have_why && used < len)
            used += (size_t)snprintf(json + used, len - used, "\"throttle_reasons\":%llu,", why);
        if (used < len && used > 1)
            json[used - 1] = '}';
        else
            snprintf(json, len, "{}");
    }
shut:
    shutdown();
out:
    if (lib)
        dlclose(lib);
}

typedef int (*rsmi_init_fn)(unsigned long long);
typedef int (*rsmi_shutdown_fn)(void);
typedef int (*rsmi_temp_fn)(unsigned int, unsigned int, int, long long *);
typedef int (*rsmi_power_fn)(unsigned int, unsigned int, unsigned long long *);

/* Only functions whose signatures have been stable across ROCm releases:
 * rsmi_frequencies_t changed layout between releases, so clocks are not
 * read through it. */
void tc_rocm_smi_query(int index, char *json, size_t len)
{
    void *lib = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
    rsmi_init_fn init;
    rsmi_shutdown_fn shutdown;
    rsmi_temp_fn temp;
    rsmi_power_fn power;
    long long milli_c = 0;
    unsigned long long uw = 0;

    snprintf(json, len, "{}");
    if (!lib)
        lib = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
    LOAD(init, lib, "rsmi_init");
    LOAD(shutdown, lib, "rsmi_shut_down");
    LOAD(temp, lib, "rsmi_dev_temp_metric_get");
    LOAD(power, lib, "rsmi_dev_power_ave_get");
    if (init && shutdown && init(0) == 0) {
        bool have_t = temp && temp((unsigned int)index, 0, 0, &milli_c) == 0;
        bool have_p = power && power((unsigned int)index, 0, &uw) == 0;

        snprintf(json, len, "{\"temp_c\":%.1f,\"power_w\":%.1f}", have_t ? milli_c / 1000.0 : 0.0,
                 have_p ? uw / 1e6 : 0.0);
        shutdown();
    }
    if (lib)
        dlclose(lib);
}
