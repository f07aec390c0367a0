// A scheduler driven by the MMGP runtime advisor, against static EDTLP and MGPS's U <= 4 rule, for
// 1..16 bootstraps ([R] = paper 000, Fig. 8's experiment) — on a SIMULATED off-load workload.
//
// The machine and the program are simulated (discrete events, simulated seconds): a Cell-like node
// with H = 2 host contexts and A = 8 accelerators; up to 8 worker processes run B bootstraps, each
// a chain of K off-loads: 11 us of host work (on a host context, 1.5 us context switch, EDTLP: the
// process gives the context up at every off-load), then an off-loaded task that takes
// a/p + c + p*g on p accelerators (a = 70 us splits across the p, c = 26 us does not, g = 2 us per
// accelerator of loop-level overhead: 98 us on one, about 1.5x faster on 2, 2x on 4, [R] Table 2's range).
// The simulator is this file; no real kernels run (see examples/README.md). The measured comparison on the
// project's real off-load runtime is examples/runtime_advisor/.
//
// Schedulers (each picks p when an off-load gets its accelerators; p <= idle accelerators):
//   edtlp    p = 1 always ([R] §5.2).
//   mgps     [R] §5.4: every 8 completed off-loads, U = processes that off-loaded in that window;
//            U <= 4: loop-level parallelism with p = floor(8 / U); U > 4: p = 1.
//   advisor  p = mmgp::advisor::recommend(): the model's best p for the active processes, idle
//            accelerators and waiting off-loads, with the application re-estimated online. Its prior
//            is deliberately wrong (it believes all 96 us split perfectly); it learns a, c from the
//            durations it observes.
//
//   ./scheduler_sim            # table for 1..16 bootstraps
//   ./scheduler_sim 32 500     # up to 32 bootstraps, 500 off-loads per bootstrap
//   ./scheduler_sim 16 2000 poor   # loops that barely scale: a = 30 us, c = 66 us, g = 8 us
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <mmgp/advisor.hpp>

namespace {

constexpr int H = 2, A = 8, max_workers = 8;
constexpr double host_s = 11e-6, csw_s = 1.5e-6;
// The "scaling" workload (default); "poor" sets 30 us / 66 us / 8 us: loops barely pay beyond p = 2.
double split_s = 70e-6, serial_s = 26e-6, g_s = 2e-6;

double offload_time(int p) { return split_s / p + serial_s + p * g_s; }

enum class kind { edtlp, mgps, advisor };

struct event {
    double t;
    int type;  // 0: host phase done, 1: off-load done
    int proc, p;
    bool operator>(const event& o) const { return t > o.t; }
};

std::unique_ptr<mmgp::advisor> make_advisor(int K) {
    mmgp::platform pl;
    pl.name = "simulated-cell";
    pl.hpu_contexts = H;
    pl.apus = A;
    pl.O_offload = 0.0;
    pl.T_csw = csw_s;
    pl.alpha.value = 1.0;
    mmgp::application app;
    app.name = "simulated-bootstrap";
    app.decomp = mmgp::decomposition::task;
    app.N = K;
    app.T_hpu = K * host_s;
    app.T_apu = K * (split_s + serial_s);  // the wrong prior: everything splits
    app.C_apu = 0.0;
    app.g = g_s;
    mmgp::advisor_options o;
    o.refresh_every = 32;
    return std::make_unique<mmgp::advisor>(pl, app, o);
}

double simulate(kind k, int B, int K, double* mean_p) {
    const int W = std::min(B, max_workers);
    std::unique_ptr<mmgp::advisor> adv;
    if (k == kind::advisor) adv = make_advisor(K);
    std::priority_queue<event, std::vector<event>, std::greater<event>> q;
    std::deque<int> host_wait, apu_wait;
    std::vector<int> left(static_cast<std::size_t>(W), K);
    int next_bootstrap = W, live = W, idle_ctx = H, idle_apu = A;
    double now = 0.0, p_sum = 0.0;
    long offloads = 0;
    // MGPS window state.
    int mgps_p = 1, window = 0;
    std::vector<char> seen(static_cast<std::size_t>(W), 0);
    if (adv) adv->set_active_tasks(live);

    auto start_host = [&](int proc) {
        if (idle_ctx > 0) {
            --idle_ctx;
            q.push({now + csw_s + host_s, 0, proc, 0});
        } else {
            host_wait.push_back(proc);
        }
    };
    auto choose_p = [&]() {
        int p = 1;
        if (k == kind::mgps) p = mgps_p;
        if (k == kind::advisor) {
            adv->set_waiting_tasks(static_cast<int>(apu_wait.size()));
            p = adv->recommend().p;
        }
        return std::max(1, std::min(p, idle_apu));
    };
    auto start_offload = [&](int proc) {
        const int p = choose_p();
        idle_apu -= p;
        if (adv) adv->offload_start(p);
        q.push({now + offload_time(p), 1, proc, p});
        p_sum += p;
        ++offloads;
    };
    for (int i = 0; i < W; ++i) start_host(i);
    while (!q.empty()) {
        event e = q.top();
        q.pop();
        now = e.t;
        if (e.type == 0) {  // host phase done: give the context up, ask for accelerators
            if (adv) adv->host_gap(host_s);
            if (!host_wait.empty()) {
                int nx = host_wait.front();
                host_wait.pop_front();
                q.push({now + csw_s + host_s, 0, nx, 0});
            } else {
                ++idle_ctx;
            }
            if (idle_apu > 0 && apu_wait.empty())
                start_offload(e.proc);
            else
                apu_wait.push_back(e.proc);
            continue;
        }
        // Off-load done.
        idle_apu += e.p;
        if (adv) adv->offload_end(e.p, offload_time(e.p));
        if (k == kind::mgps) {
            seen[static_cast<std::size_t>(e.proc)] = 1;
            if (++window == A) {
                int U = 0;
                for (char s : seen) U += s;
                mgps_p = U <= 4 ? std::max(1, A / std::max(U, 1)) : 1;
                window = 0;
                std::fill(seen.begin(), seen.end(), 0);
            }
        }
        auto& l = left[static_cast<std::size_t>(e.proc)];
        bool alive = true;
        if (--l == 0) {
            if (adv) adv->task_end();
            if (next_bootstrap < B) {
                ++next_bootstrap;
                l = K;
                if (adv) adv->task_begin();
            } else {
                alive = false;
                --live;
            }
        }
        while (idle_apu > 0 && !apu_wait.empty()) {
            int nx = apu_wait.front();
            apu_wait.pop_front();
            start_offload(nx);
        }
        if (alive) start_host(e.proc);
    }
    if (mean_p) *mean_p = offloads ? p_sum / static_cast<double>(offloads) : 0.0;
    return now;
}

}  // namespace

int main(int argc, char** argv) {
    const int max_b = argc > 1 ? std::atoi(argv[1]) : 16;
    const int K = argc > 2 ? std::atoi(argv[2]) : 2000;
    const std::string workload = argc > 3 ? argv[3] : "scaling";
    if (max_b < 1 || K < 1 || (workload != "scaling" && workload != "poor")) {
        std::fprintf(stderr, "scheduler_sim: expected MAX_BOOTSTRAPS >= 1, OFFLOADS >= 1, scaling|poor\n");
        return 2;
    }
    if (workload == "poor") split_s = 30e-6, serial_s = 66e-6, g_s = 8e-6;
    std::printf("# simulated %s workload: H=%d host contexts, A=%d accelerators, %d off-loads per bootstrap of "
                "a/p + c + p*g with a=%g us, c=%g us, g=%g us (times in simulated s)\n",
                workload.c_str(), H, A, K, split_s * 1e6, serial_s * 1e6, g_s * 1e6);
    std::printf("%10s %10s %10s %10s %9s %9s %8s %8s\n", "bootstraps", "edtlp", "mgps", "advisor", "adv/edtlp",
                "adv/mgps", "p mgps", "p adv");
    double sum_e = 0, sum_m = 0, sum_a = 0;
    for (int B = 1; B <= max_b; ++B) {
        double pm = 0, pa = 0;
        const double te = simulate(kind::edtlp, B, K, nullptr);
        const double tm = simulate(kind::mgps, B, K, &pm);
        const double ta = simulate(kind::advisor, B, K, &pa);
        sum_e += te, sum_m += tm, sum_a += ta;
        std::printf("%10d %10.4f %10.4f %10.4f %9.3f %9.3f %8.2f %8.2f\n", B, te, tm, ta, ta / te, ta / tm, pm, pa);
    }
    std::printf("# total over 1..%d bootstraps: edtlp %.4f s, mgps %.4f s, advisor %.4f s\n", max_b, sum_e, sum_m, sum_a);
    return 0;
}
