/* mmgp/advisor.h — the MMGP runtime advisor for C runtimes (link with libmmgp: pkg-config mmgp).
 *
 *   mmgp_advisor* adv = NULL;
 *   char err[256];
 *   if (mmgp_advisor_create("raxml-qs20", NULL, &adv, err, sizeof err) != MMGP_OK) { puts(err); exit(2); }
 *   mmgp_advisor_task_begin(adv);
 *   mmgp_advice a;
 *   mmgp_advisor_recommend(adv, &a);                 // lock-free, allocation-free
 *   mmgp_advisor_offload_start(adv, a.p);  ...  mmgp_advisor_offload_end(adv, a.p, seconds);
 *   mmgp_advisor_destroy(adv);                       // NULL is fine
 *
 * Every function returns an mmgp_status (or nothing); no C++ exception crosses this interface.
 * All functions on one handle are thread-safe; the C++ API is mmgp/advisor.hpp.
 */
#ifndef MMGP_ADVISOR_H
#define MMGP_ADVISOR_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(MMGP_BUILDING_LIBRARY)
#define MMGP_API __declspec(dllexport)
#elif defined(__GNUC__)
#define MMGP_API __attribute__((visibility("default")))
#else
#define MMGP_API
#endif

#define MMGP_ADVISOR_VERSION_MAJOR 0
#define MMGP_ADVISOR_VERSION_MINOR 3
#define MMGP_ADVISOR_VERSION_PATCH 0
/** Compile-time version of this C API: major * 10000 + minor * 100 + patch. Compare with mmgp_advisor_version().
 *  0.2.0 (200) added mmgp_advisor_options.explore_every and mmgp_advice.probe; a library older than the
 *  header ignores the first and leaves the second alone: check mmgp_advisor_version() >= 200 before relying on them.
 *  0.3.0 (300) added mmgp_advisor_get_node(): on a GPU node p counts blocks, up to its capacity. */
#define MMGP_ADVISOR_VERSION \
    (MMGP_ADVISOR_VERSION_MAJOR * 10000 + MMGP_ADVISOR_VERSION_MINOR * 100 + MMGP_ADVISOR_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes (fixed values). */
typedef enum mmgp_status {
    MMGP_OK = 0,                /**< success */
    MMGP_E_INVALID_ARGUMENT = 1,/**< a NULL pointer, a negative count, a NaN, an option out of range */
    MMGP_E_INPUT = 2,           /**< the profile cannot be read or evaluated (message in the error buffer) */
    MMGP_E_NO_MEMORY = 3,       /**< allocation failed */
    MMGP_E_INTERNAL = 4         /**< anything else (a bug: please report) */
} mmgp_status;

/** Loop-level parallelism for the next off-load (fixed values, same as mmgp::llp_action). */
typedef enum mmgp_llp_action {
    MMGP_LLP_THROTTLE = 0, /**< p = 1: task-level parallelism only (EDTLP) */
    MMGP_LLP_ACTIVATE = 1  /**< p > 1: split the off-loaded loops across p accelerators */
} mmgp_llp_action;

/** Model that ranks p (fixed values). */
typedef enum mmgp_model {
    MMGP_MODEL_EQ11 = 0, /**< [H] Eq. 11 verbatim */
    MMGP_MODEL_MMGP = 1  /**< the engine's model (default) */
} mmgp_model;

/** Opaque advisor handle. */
typedef struct mmgp_advisor mmgp_advisor;

/** Options, the same as mmgp::advisor_options. Start from mmgp_advisor_options_default(), which sets every
 *  field (also those added in later versions), then change what you need; an initializer list would leave
 *  a field added later unset. explore_every (since 0.2.0) takes what was the struct's tail padding in 0.1.0:
 *  the size and the older fields' offsets are those of 0.1.0, but rebuild a program compiled against the
 *  0.1.0 header: the bytes it leaves there are now read as explore_every. */
typedef struct mmgp_advisor_options {
    int model;          /**< an mmgp_model value (default MMGP_MODEL_MMGP) */
    double smoothing;   /**< weight of one observation in the moving averages, (0, 1] (default 0.05) */
    double min_gain;    /**< activate loop-level parallelism only above this predicted saving, [0, 1) (default 0.02) */
    int refresh_every;  /**< re-estimate after this many completed off-loads; 0 = only mmgp_advisor_refresh() (default 64) */
    int explore_every;  /**< since 0.2.0. 0 = off (default); n > 0: mmgp_advisor_recommend() answers with the
                             alternative p (1 against the table's p > 1, 2 against its p = 1) once no off-load at
                             that p has completed for n completed off-loads, so that a wrong prior gets corrected
                             from observations of one p; the interval doubles after each exploration (up to 64 n)
                             and returns to n when a refresh changes the table. Such an answer has probe = 1. */
} mmgp_advisor_options;

/** One recommendation. */
typedef struct mmgp_advice {
    int m;              /**< active host tasks it was computed for */
    int p;              /**< accelerators for the next off-load, >= 1 */
    int action;         /**< an mmgp_llp_action value */
    int probe;          /**< since 0.2.0 (in what was padding): 1 for an exploration (explore_every), not the
                             model's optimum (gain 0; time_s 0 unless p = 1); else 0 */
    double gain;        /**< predicted fraction of time saved against p = 1 */
    double time_s;      /**< predicted time of one task at (m, p), seconds */
    double time_p1_s;   /**< predicted time of one task at (m, 1), seconds */
    uint64_t version;   /**< table publications so far */
} mmgp_advice;

/** How the accelerators of the node are shared between the tasks (fixed values, same as mmgp::accelerator_sharing). */
typedef enum mmgp_sharing {
    MMGP_SHARING_DEDICATED = 0,  /**< each off-load's accelerators its own (CPU workers, the Cell's SPEs) */
    MMGP_SHARING_MPS = 1,        /**< a GPU under MPS: the tasks' grids run at once */
    MMGP_SHARING_TIME_SLICED = 2 /**< a GPU without MPS: one task's grid at a time */
} mmgp_sharing;

/** The node the advice is for (since 0.3.0). */
typedef struct mmgp_advisor_node {
    int apus;          /**< A: accelerators (a GPU's SMs) */
    int capacity;      /**< the blocks they hold, the largest p: A, or A x apu_slots on a GPU node; the unit of
                            offload_start/end's p and of mmgp_advisor_set_idle_apus() */
    int hpu_contexts;  /**< H */
    int max_tasks;     /**< the largest m in the table */
    int sharing;       /**< an mmgp_sharing value: the one mode priced (time-sliced: idle and waiting counts cap nothing) */
} mmgp_advisor_node;

/** Current estimates of the application, per off-load. */
typedef struct mmgp_advisor_estimates {
    double host_gap_s;        /**< host time between two off-loads of a task */
    double apu_s;             /**< accelerator time of one off-load on 1 APU */
    double parallel_fraction; /**< part of apu_s that splits across APUs, [0, 1] */
    double offloads_per_task; /**< N */
    uint64_t offloads;        /**< completed off-loads observed */
    uint64_t tasks;           /**< completed tasks observed */
} mmgp_advisor_estimates;

/** Run-time version of the library's C API (major * 10000 + minor * 100 + patch). */
MMGP_API unsigned mmgp_advisor_version(void);
/** A static, human-readable text for a status ("invalid argument", ...); never NULL. */
MMGP_API const char* mmgp_advisor_status_string(int status);
/** The default options (those of mmgp::advisor_options), every field set; explore_every 0. */
MMGP_API mmgp_advisor_options mmgp_advisor_options_default(void);

/** Creates an advisor from a scenario file path or a bundled scenario name. options may be NULL
 *  (defaults). On failure *out is NULL and, when err is not NULL, err receives a one-line message
 *  (truncated to err_size bytes, always terminated). */
MMGP_API int mmgp_advisor_create(const char* scenario, const mmgp_advisor_options* options, mmgp_advisor** out,
                                 char* err, size_t err_size);
/** Creates an advisor from a platform and an application profile (paths or bundled names: "qs20", "raxml"). */
MMGP_API int mmgp_advisor_create_from(const char* platform, const char* application,
                                      const mmgp_advisor_options* options, mmgp_advisor** out, char* err,
                                      size_t err_size);
/** Destroys an advisor; NULL is accepted and ignored. */
MMGP_API void mmgp_advisor_destroy(mmgp_advisor* advisor);

/* Observations (thread-safe, cheap). */
MMGP_API int mmgp_advisor_task_begin(mmgp_advisor* advisor);
MMGP_API int mmgp_advisor_task_end(mmgp_advisor* advisor);
MMGP_API int mmgp_advisor_set_active_tasks(mmgp_advisor* advisor, int m);
MMGP_API int mmgp_advisor_offload_start(mmgp_advisor* advisor, int p);
MMGP_API int mmgp_advisor_offload_end(mmgp_advisor* advisor, int p, double seconds);
MMGP_API int mmgp_advisor_host_gap(mmgp_advisor* advisor, double seconds);
MMGP_API int mmgp_advisor_set_idle_apus(mmgp_advisor* advisor, int n);
MMGP_API int mmgp_advisor_set_waiting_tasks(mmgp_advisor* advisor, int n);

/* Queries (lock-free, allocation-free). */
/** Advice for the next off-load now (active tasks, idle accelerators, waiting tasks). */
MMGP_API int mmgp_advisor_recommend(const mmgp_advisor* advisor, mmgp_advice* out);
/** Advice for m active tasks with p at most max_p (max_p <= 0: every feasible p). */
MMGP_API int mmgp_advisor_recommend_for(const mmgp_advisor* advisor, int m, int max_p, mmgp_advice* out);
/** Re-estimates and republishes now. */
MMGP_API int mmgp_advisor_refresh(mmgp_advisor* advisor);
/** The current estimates. */
MMGP_API int mmgp_advisor_get_estimates(const mmgp_advisor* advisor, mmgp_advisor_estimates* out);
/** The node: accelerators, capacity in blocks, host contexts, largest m, sharing mode (since 0.3.0). */
MMGP_API int mmgp_advisor_get_node(const mmgp_advisor* advisor, mmgp_advisor_node* out);

#ifdef __cplusplus
}
#endif

#endif /* MMGP_ADVISOR_H */
