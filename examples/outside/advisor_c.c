/* A C runtime's view of the advisor: create from a bundled scenario, feed a few observations,
 * ask for the next off-load's p. Built against the installed library: cc advisor_c.c $(pkg-config --cflags --libs mmgp) */
#include <mmgp/advisor.h>
#include <stdio.h>

int main(int argc, char** argv) {
    const char* scenario = argc > 1 ? argv[1] : "raxml-qs20";
    char err[512];
    mmgp_advisor* adv = NULL;
    int st = mmgp_advisor_create(scenario, NULL, &adv, err, sizeof err);
    if (st != MMGP_OK) {
        fprintf(stderr, "advisor_c: %s: %s\n", mmgp_advisor_status_string(st), err);
        return 2;
    }
    if (mmgp_advisor_version() != MMGP_ADVISOR_VERSION) fprintf(stderr, "advisor_c: header and library versions differ\n");
    for (int m = 1; m <= 16; m *= 2) {
        mmgp_advice a;
        mmgp_advisor_recommend_for(adv, m, 0, &a);
        printf("m=%d p=%d %s gain=%.3f\n", a.m, a.p, a.action == MMGP_LLP_ACTIVATE ? "activate" : "throttle", a.gain);
    }
    mmgp_advisor_task_begin(adv);
    mmgp_advisor_offload_start(adv, 4);
    mmgp_advisor_offload_end(adv, 4, 5.0);
    mmgp_advice now;
    mmgp_advisor_recommend(adv, &now);
    printf("now: m=%d p=%d version=%llu\n", now.m, now.p, (unsigned long long)now.version);
    mmgp_advisor_destroy(adv);
    mmgp_advisor_destroy(NULL);
    return 0;
}
