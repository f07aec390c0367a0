// The local backend of mmgp tune: each run is the launcher's command (mpirun, mpiexec, srun) or, with the local
// launcher, the processes mmgp starts itself; one run at a time. Called by the loop (tune_loop.cpp) through
// tune_backend; runs processes through process_backend (tune_runs.hpp).
#include <filesystem>
#include <string>

#include "tune_backend.hpp"
#include "tune_runs.hpp"

namespace mmgp::run {

namespace {

class local_runs final : public process_backend {
public:
    explicit local_runs(launch_setup setup) : setup_(std::move(setup)) {}

    run_start start(const run_request& request, nlohmann::json& journal_line) override {
        const launch_plan plan = setup_.plan(request.config, request.short_run);
        journal_line["command"] = journal_command(shell_command(plan));
        std::vector<run_process> procs;
        if (plan.kind == launcher_kind::local)
            for (const auto& lp : plan.processes) procs.push_back({lp.argv, lp.env});
        else
            procs.push_back({plan.argv, {}});
        journal_line["load1"] = load1();
        std::string log;
        if (!logs_.empty()) {
            log = logs_ + "/run-" + std::to_string(request.number) + ".log";
            journal_line["log"] = log;
        }
        return {start_verdict::started, launch(procs, request.bound_s, {}, {}, log)};
    }

    // The program's output and errors go to one log per run beside the journal (JOURNAL.logs/run-N.log), not
    // into mmgp's progress lines. Without a journal, or when the folder cannot be made: stderr as before.
    void attach_journal(const std::string& journal_path) override {
        std::error_code ec;
        const std::string dir = journal_path + ".logs";
        std::filesystem::create_directories(dir, ec);
        logs_ = ec || journal_path.empty() ? std::string() : dir;
    }

private:
    launch_setup setup_;
    std::string logs_;
};

}  // namespace

std::unique_ptr<tune_backend> local_backend(launch_setup setup) { return std::make_unique<local_runs>(std::move(setup)); }

}  // namespace mmgp::run
