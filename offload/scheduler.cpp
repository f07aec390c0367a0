// The built-in off-load schedulers of the runtime's pool mode: edtlp, mgps ([R] §5.4), advisor (libmmgp).
#include "scheduler.hpp"

#include <algorithm>
#include <mmgp/advisor.hpp>
#include <vector>

#include "kernels.hpp"

namespace mmgp::kernels {

namespace {

class edtlp_scheduler final : public offload_scheduler {
public:
    const char* name() const override { return "edtlp"; }
    int choose(const offload_state&) override { return 1; }
};

// [R] §5.4: starts with one APU per off-load; the process that completes the window-th, 2*window-th, ... off-load
// evaluates U, the number of processes that off-loaded in the window, and switches LLP on (p = A / U) or off.
class mgps_scheduler final : public offload_scheduler {
public:
    mgps_scheduler(int window, int max_u) : window_(window), max_u_(max_u) {}
    const char* name() const override { return "mgps"; }
    int choose(const offload_state& s) override {
        if (seen_.empty()) seen_.assign(64, 0);
        apus_ = s.apus;
        return p_;
    }
    void started(int process, int) override { mark(process); }
    void released(int process, int) override {
        mark(process);
        const int w = window_ > 0 ? window_ : std::max(apus_, 1);
        if (++done_ < w) return;
        int u = 0;
        for (char c : seen_) u += c;
        p_ = u >= 1 && u <= max_u_ ? std::max(1, apus_ / u) : 1;
        done_ = 0;
        std::fill(seen_.begin(), seen_.end(), 0);
    }

private:
    void mark(int process) {
        if (process < 0) return;
        if (static_cast<std::size_t>(process) >= seen_.size()) seen_.resize(static_cast<std::size_t>(process) + 1, 0);
        seen_[static_cast<std::size_t>(process)] = 1;
    }
    int window_, max_u_;
    int apus_ = 1, p_ = 1, done_ = 0;
    std::vector<char> seen_;
};

class advisor_scheduler final : public offload_scheduler {
public:
    explicit advisor_scheduler(std::shared_ptr<mmgp::advisor> a) : adv_(std::move(a)) {}
    const char* name() const override { return "advisor"; }
    int choose(const offload_state& s) override {
        adv_->set_idle_apus(s.idle_apus);
        adv_->set_waiting_tasks(s.waiting);
        return adv_->recommend().p;
    }
    void started(int, int p) override { adv_->offload_start(p); }
    void finished(int, int p, double seconds) override { adv_->offload_end(p, seconds); }
    void host_gap(int, double seconds) override { adv_->host_gap(seconds); }
    void unit_begin(int) override { adv_->task_begin(); }
    void unit_end(int) override { adv_->task_end(); }

private:
    std::shared_ptr<mmgp::advisor> adv_;
};

}  // namespace

std::shared_ptr<offload_scheduler> make_edtlp_scheduler() { return std::make_shared<edtlp_scheduler>(); }

std::shared_ptr<offload_scheduler> make_mgps_scheduler(int window, int max_u) {
    return std::make_shared<mgps_scheduler>(window, max_u);
}

std::shared_ptr<offload_scheduler> make_advisor_scheduler(std::shared_ptr<mmgp::advisor> adv) {
    if (!adv) throw std::invalid_argument("make_advisor_scheduler: null advisor");
    return std::make_shared<advisor_scheduler>(std::move(adv));
}

std::shared_ptr<offload_scheduler> make_scheduler(const std::string& name, const std::string& scenario) {
    if (name == "edtlp") return make_edtlp_scheduler();
    if (name == "mgps") return make_mgps_scheduler();
    if (name == "advisor") {
        if (scenario.empty()) throw usage_error("--scheduler advisor: expected a scenario (--advisor-scenario FILE)");
        mmgp::advisor_options o;
        o.refresh_every = 32;
        return make_advisor_scheduler(std::make_shared<mmgp::advisor>(scenario, o));
    }
    throw usage_error("--scheduler: expected edtlp, mgps or advisor, found \"" + name + "\"");
}

}  // namespace mmgp::kernels
