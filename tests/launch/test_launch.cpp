// mmgp/launch.hpp and `mmgp launch`: rendered commands, the binding fallback, shell quoting checked by
// a real shell, local launches whose processes report their rank and share, and real OpenMPI launches.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unistd.h>

#include "mmgp/launch.hpp"
#include "support.hpp"

using mmgp::launch_request;
using mmgp::launcher_kind;
using mmgp::test::run_mmgp;
using mmgp::test::slurp;
using mmgp::test::temp_dir;
using strings = std::vector<std::string>;

namespace {

using mmgp::test::on_path;


launch_request request(launcher_kind k, int m, int p, int nodes, int cores) {
    launch_request rq;
    rq.kind = k;
    rq.mapping = {m, p, nodes, mmgp::policy::edtlp};
    rq.cores_per_node = cores;
    rq.units = 10;
    return rq;
}

const strings mpi_env = {"OMP_NUM_THREADS=2", "OMP_PLACES=cores", "OMP_PROC_BIND=close", "MMGP_M=4",
                         "MMGP_P=2",          "MMGP_NODES=3",     "MMGP_NP=12",          "MMGP_UNITS_TOTAL=10"};

}  // namespace

TEST_CASE("units_of_rank: U / procs each, the first U mod procs ranks one more") {
    // 16 bootstraps over 3 processes: 6, 5, 5 (by hand).
    CHECK(mmgp::units_of_rank(16, 3, 0) == 6);
    CHECK(mmgp::units_of_rank(16, 3, 1) == 5);
    CHECK(mmgp::units_of_rank(16, 3, 2) == 5);
    CHECK(mmgp::units_of_rank(2, 4, 1) == 1);
    CHECK(mmgp::units_of_rank(2, 4, 2) == 0);
    for (std::int64_t U : {0, 1, 7, 100, 1001})
        for (std::int64_t procs : {1, 2, 3, 8, 13}) {
            std::int64_t sum = 0, lo = U, hi = 0;
            for (std::int64_t r = 0; r < procs; ++r) {
                auto u = mmgp::units_of_rank(U, procs, r);
                sum += u;
                lo = std::min(lo, u);
                hi = std::max(hi, u);
            }
            CHECK(sum == U);
            CHECK(hi - lo <= 1);
        }
}

TEST_CASE("OpenMPI: ppr:M:node:pe=P with core binding, environment on the command line") {
    auto plan = mmgp::render_launch(request(launcher_kind::openmpi, 4, 2, 3, 8), {"./app", "-T", "{p}", "-n{np}"});
    strings want = {"mpirun", "-np", "12", "--map-by", "ppr:4:node:pe=2", "--bind-to", "core"};
    for (const auto& e : mpi_env) want.insert(want.end(), {"-x", e});
    want.insert(want.end(), {"./app", "-T", "2", "-n12"});
    CHECK(plan.argv == want);
    CHECK(plan.notes.empty());
    CHECK(plan.processes.empty());
    CHECK(mmgp::shell_command(plan).rfind("mpirun -np 12 --map-by ppr:4:node:pe=2 --bind-to core -x OMP_NUM_THREADS=2", 0) == 0);
}

TEST_CASE("OpenMPI: m*p above the cores drops pe=P and binding; --oversubscribe and root are opt-in") {
    auto rq = request(launcher_kind::openmpi, 2, 2, 1, 2);
    auto plan = mmgp::render_launch(rq, {"x"});
    CHECK(plan.argv[4] == "ppr:2:node");
    CHECK(plan.argv[6] == "none");
    CHECK(plan.notes.size() == 1);  // m = 2 still fits 2 cores: no refusal warning
    rq.mapping.m = 3;
    plan = mmgp::render_launch(rq, {"x"});
    CHECK(plan.notes.size() == 2);
    CHECK(plan.notes[1].find("--oversubscribe") != std::string::npos);
    CHECK(std::find(plan.argv.begin(), plan.argv.end(), "--oversubscribe") == plan.argv.end());
    rq.oversubscribe = true;
    rq.allow_run_as_root = true;
    plan = mmgp::render_launch(rq, {"x"});
    CHECK(plan.argv[7] == "--oversubscribe");
    CHECK(plan.argv[8] == "--allow-run-as-root");
    CHECK(plan.notes.size() == 1);
    // Unknown cores (0): rendered as asked.
    plan = mmgp::render_launch(request(launcher_kind::openmpi, 16, 16, 1, 0), {"x"});
    CHECK(plan.argv[4] == "ppr:16:node:pe=16");
}

TEST_CASE("MPICH mpiexec and Slurm srun equivalents") {
    auto plan = mmgp::render_launch(request(launcher_kind::mpich, 4, 2, 3, 0), {"./app"});
    strings want = {"mpiexec", "-n", "12", "-ppn", "4", "-bind-to", "core:2"};
    for (const auto& e : mpi_env) {
        auto eq = e.find('=');
        want.insert(want.end(), {"-genv", e.substr(0, eq), e.substr(eq + 1)});
    }
    want.push_back("./app");
    CHECK(plan.argv == want);

    plan = mmgp::render_launch(request(launcher_kind::srun, 4, 2, 3, 0), {"./app", "{nodes}"});
    std::string exp = "--export=ALL";
    for (const auto& e : mpi_env) exp += "," + e;
    CHECK(plan.argv == strings{"srun", "-N", "3", "-n", "12", "--ntasks-per-node=4", "--cpus-per-task=2",
                               "--cpu-bind=cores", exp, "./app", "3"});
    // m*p = 8 threads on 4 cores: not bound, and each task asks 4/4 = 1 CPU, so that the 4 tasks fit the node
    // (--cpus-per-task=2 there: Slurm refuses the step, or a new job waits for resources no node has).
    // --overcommit, asked for, is left out: the 4 processes fit the 4 cores, and Slurm would then allocate
    // --cpus-per-task once per node.
    auto rq = request(launcher_kind::srun, 4, 2, 3, 4);
    rq.oversubscribe = true;
    plan = mmgp::render_launch(rq, {"./app"});
    CHECK(plan.argv[6] == "--cpus-per-task=1");
    CHECK(plan.argv[7] == "--cpu-bind=none");
    CHECK(plan.argv[8].rfind("--export=", 0) == 0);
    REQUIRE(plan.notes.size() == 1);
    CHECK(plan.notes[0].find("srun asks 1 CPU per task (--cpus-per-task=1), 4 of the node's 4 cores time-shared") !=
          std::string::npos);
    // 3 tasks of 4 threads on 8 cores: 8/3 = 2 CPUs each; unbound by --no-bind the same.
    rq = request(launcher_kind::srun, 3, 4, 1, 8);
    CHECK(mmgp::render_launch(rq, {"./app"}).argv[6] == "--cpus-per-task=2");
    rq.bind = false;
    CHECK(mmgp::render_launch(rq, {"./app"}).argv[6] == "--cpus-per-task=2");
    // Within the cores, p each; cores unknown, p each.
    CHECK(mmgp::render_launch(request(launcher_kind::srun, 2, 4, 1, 8), {"./app"}).argv[6] == "--cpus-per-task=4");
    CHECK(mmgp::render_launch(request(launcher_kind::srun, 8, 4, 1, 0), {"./app"}).argv[6] == "--cpus-per-task=4");
    // More processes than cores, --oversubscribe: --overcommit, and the CPUs are allocated once per node: all 4.
    rq = request(launcher_kind::srun, 6, 2, 1, 4);
    rq.oversubscribe = true;
    plan = mmgp::render_launch(rq, {"./app"});
    CHECK(plan.argv[6] == "--cpus-per-task=4");
    CHECK(plan.argv[8] == "--overcommit");
}

TEST_CASE("local: one process per rank, its share of the units, CPU sets of p cores") {
    auto rq = request(launcher_kind::local, 3, 2, 1, 0);
    rq.units = 16;
    rq.cpus = {0, 1, 2, 3, 4, 5, 6, 7};
    auto plan = mmgp::render_launch(rq, {"raxml", "-T", "{p}", "-N", "{units}", "-n", "run{rank}", "{unknown}", "{m}"});
    REQUIRE(plan.processes.size() == 3);
    const std::int64_t share[] = {6, 5, 5};
    for (int r = 0; r < 3; ++r) {
        const auto& lp = plan.processes[static_cast<std::size_t>(r)];
        CHECK(lp.rank == r);
        CHECK(lp.units == share[r]);
        CHECK(lp.cpus == std::vector<int>{2 * r, 2 * r + 1});
        CHECK(lp.argv == strings{"taskset", "-c", std::to_string(2 * r) + "," + std::to_string(2 * r + 1), "raxml", "-T",
                                 "2", "-N", std::to_string(share[r]), "-n", "run" + std::to_string(r), "{unknown}", "3"});
        CHECK(std::find(lp.env.begin(), lp.env.end(), std::pair<std::string, std::string>{"MMGP_RANK", std::to_string(r)}) !=
              lp.env.end());
    }
    rq.cpus = {0, 1, 2, 3, 4};  // 6 cores needed: no binding, and a note
    plan = mmgp::render_launch(rq, {"x"});
    CHECK(plan.processes[0].argv == strings{"x"});
    CHECK(plan.notes.size() == 1);
}

TEST_CASE("render_launch rejects what cannot be launched") {
    auto rq = request(launcher_kind::local, 2, 1, 2, 0);
    CHECK_THROWS_WITH_AS(mmgp::render_launch(rq, {"x"}),
                         "--launcher local: expected nodes = 1 (the local launcher starts processes on this machine), found nodes=2",
                         mmgp::error);
    rq.mapping.nodes = 1;
    CHECK_THROWS_AS(mmgp::render_launch(rq, {}), mmgp::error);
    rq.mapping.p = 0;
    CHECK_THROWS_AS(mmgp::render_launch(rq, {"x"}), mmgp::error);
    CHECK_THROWS_AS(mmgp::render_launch(request(launcher_kind::openmpi, 2, 1, 1, 0), {"x", "--seed={rank}"}), mmgp::error);
    CHECK_THROWS_AS(mmgp::render_launch(request(launcher_kind::srun, 2, 1, 1, 0), {"x", "{units}"}), mmgp::error);
}

TEST_CASE("shell_quote survives a real shell") {
    temp_dir d;
    const strings words = {"plain", "two words", "it's", "$HOME", "a\"b", "", "*", "back\\slash", "new\nline", "{p}", "~x", "a;b|c&"};
    std::string script = "printf '%s\\n'";
    for (const auto& w : words) {
        script += ' ';
        script += mmgp::shell_quote(w);
    }
    auto path = d.write("s.sh", script + " > " + (d.path / "out").string() + "\n");
    REQUIRE(std::system(("sh " + path).c_str()) == 0);
    std::string want;
    for (const auto& w : words) want += w + "\n";
    CHECK(slurp(d.path / "out") == want);
    CHECK(mmgp::shell_quote("plain") == "plain");
}

TEST_CASE("mmgp launch --launcher local --exec: every process gets its rank, share, p and environment") {
    temp_dir d;
    const std::string dir = d.path.string();
    // raxml-qs20 has 16 bootstraps; 3 processes get 6, 5, 5.
    auto r = run_mmgp("launch raxml-qs20 --launcher local --m 3 --p 1 --exec -- sh -c "
                      "'echo {rank} {units} {p} {m} $MMGP_RANK $MMGP_UNITS $OMP_NUM_THREADS > " + dir + "/out.{rank}'");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.empty());
    CHECK(slurp(d.path / "out.0") == "0 6 1 3 0 6 1\n");
    CHECK(slurp(d.path / "out.1") == "1 5 1 3 1 5 1\n");
    CHECK(slurp(d.path / "out.2") == "2 5 1 3 2 5 1\n");
    // --units overrides the application's units: 5 over 2 processes = 3, 2.
    r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 --units 5 --exec -- sh -c 'echo {units} > " + dir + "/u.{rank}'");
    REQUIRE(r.status == 0);
    CHECK(slurp(d.path / "u.0") == "3\n");
    CHECK(slurp(d.path / "u.1") == "2\n");
}

TEST_CASE("mmgp launch --units is part of the choice: the mapping is chosen for that many units, no rank without one") {
    // raxml-qs20 (16 units) picks m > 3; with 3 units the search itself keeps m <= 3.
    auto many = run_mmgp("launch raxml-qs20 --launcher local --json -- x");
    REQUIRE(many.status == 0);
    REQUIRE(nlohmann::json::parse(many.out)["mapping"]["m"].get<int>() > 3);
    for (int units : {1, 2, 3}) {
        auto r = run_mmgp("launch raxml-qs20 --launcher local --json --units " + std::to_string(units) + " -- x");
        INFO(r.err);
        REQUIRE(r.status == 0);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j["mapping"]["m"].get<int>() <= units);
        CHECK(j["units"].get<int>() == units);
        for (const auto& p : j["processes"]) CHECK(p["units"].get<int>() >= 1);
        // The predicted time is the model's for that many units.
        auto pr = run_mmgp("predict raxml-qs20 --json --m " + std::to_string(j["mapping"]["m"].get<int>()) + " --p " +
                           std::to_string(j["mapping"]["p"].get<int>()));
        REQUIRE(pr.status == 0);
        if (units < 16) CHECK(nlohmann::json::parse(pr.out)["best"]["time_s"].get<double>() != j["mapping"]["time_s"].get<double>());
    }
    // A forced mapping with more ranks than units is refused, not launched with idle ranks.
    mmgp::test::expect_bad_input("launch raxml-qs20 --launcher local --m 4 --p 1 --units 2 -- x",
                                 "--units: expected at least 4 units, one for each rank of m=4 p=1 nodes=1, found \"2\"");
}

TEST_CASE("mmgp launch prints a command that a shell runs with the same effect") {
    temp_dir d;
    const std::string dir = d.path.string();
    auto r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 --units 3 -- sh -c "
                      "'echo \"rank {rank}: $MMGP_UNITS units\" > " + dir + "/p.{rank}'");
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("# raxml-qs20: chosen m=2 p=1 nodes=1", 0) == 0);
    auto script = d.write("run.sh", r.out);
    REQUIRE(std::system(("sh " + script).c_str()) == 0);
    CHECK(slurp(d.path / "p.0") == "rank 0: 2 units\n");
    CHECK(slurp(d.path / "p.1") == "rank 1: 1 units\n");
}

TEST_CASE("mmgp launch --json: the best mapping of the search and the command as data") {
    auto r = run_mmgp("launch pbpi-qs20 --launcher openmpi --cores-per-node 16 --json -- ./pbpi -t {p}");
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    // [H] §4.4: the optimum of PBPI on the QS20 is m = 4, p = 4.
    CHECK(j["mapping"]["m"] == 4);
    CHECK(j["mapping"]["p"] == 4);
    CHECK(j["mapping"]["nodes"] == 1);
    CHECK(j["launcher"] == "openmpi");
    auto argv = j["argv"].get<strings>();
    CHECK(argv[0] == "mpirun");
    CHECK(argv[2] == "4");
    CHECK(argv[4] == "ppr:4:node:pe=4");
    CHECK(argv.back() == "4");
    CHECK(j["notes"].empty());
}

TEST_CASE("the printed local lines end with --exec's status: the first non-zero in rank order") {
    temp_dir d;
    // Once they ended with a bare `wait`: status 0 whatever the processes did.
    auto r = run_mmgp("launch raxml-qs20 --launcher local --m 3 --p 1 -- sh -c 'exit $((10 + {rank}))'");
    REQUIRE(r.status == 0);
    const std::string script = d.write("w.sh", r.out);
    CHECK(WEXITSTATUS(std::system(("sh " + script).c_str())) == 10);
    // Rank 0 succeeds, rank 1 fails: the first non-zero.
    r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 -- sh -c 'exit $((3 * {rank}))'");
    CHECK(WEXITSTATUS(std::system(("sh " + d.write("w3.sh", r.out)).c_str())) == 3);
    r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 -- true");
    CHECK(WEXITSTATUS(std::system(("sh " + d.write("ok.sh", r.out)).c_str())) == 0);
}

TEST_CASE("mmgp launch --exec returns the children's status and forwards SIGTERM") {
    auto r = run_mmgp("launch raxml-qs20 --launcher local --m 3 --p 1 --exec -- sh -c 'exit $((10 + {rank}))'");
    CHECK(r.status == 10);
    r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 --exec -- /nonexistent/program");
    CHECK(r.status == 127);
    CHECK(r.err.find("/nonexistent/program") != std::string::npos);

    temp_dir d;
    const std::string dir = d.path.string();
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        std::string cmd = "echo started > " + dir + "/s.{rank}; exec sleep 60";
        std::string bin = mmgp::test::mmgp_bin();
        execl(bin.c_str(), bin.c_str(), "launch", "raxml-qs20", "--launcher", "local", "--m", "2", "--p", "1",
              "--exec", "--", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(99);
    }
    bool started = false;
    for (int i = 0; i < 600 && !started; ++i) {
        started = std::filesystem::exists(d.path / "s.0") && std::filesystem::exists(d.path / "s.1");
        if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK(started);
    kill(pid, SIGTERM);
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 128 + SIGTERM);  // the children died of the forwarded SIGTERM
}

TEST_CASE("mmgp launch --launcher openmpi --exec runs a real MPI program with the mapping" *
          doctest::skip(!on_path("mpirun") || !on_path("mpicc")) *
          doctest::description("needs mpirun and mpicc (scripts/setup.sh installs openmpi-bin and libopenmpi-dev)")) {
    temp_dir d;
    auto src = d.write("hello.c",
                       "#include <mpi.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
                       "int main(int argc, char** argv) {\n"
                       "  MPI_Init(&argc, &argv);\n  int rank, size;\n"
                       "  MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  MPI_Comm_size(MPI_COMM_WORLD, &size);\n"
                       "  const char* t = getenv(\"OMP_NUM_THREADS\");\n"
                       "  printf(\"rank %d of %d threads %s arg %s\\n\", rank, size, t ? t : \"-\", argc > 1 ? argv[1] : \"-\");\n"
                       "  MPI_Finalize();\n  return 0;\n}\n");
    const std::string exe = (d.path / "hello").string();
    REQUIRE(std::system(("mpicc -o " + exe + " " + src).c_str()) == 0);
    auto lines = [](const std::string& s) {
        std::multiset<std::string> out;
        std::istringstream in(s);
        for (std::string l; std::getline(in, l);) out.insert(l);
        return out;
    };
    // m = 2, p = 1 fits two cores: pe=1 with core binding.
    auto r = run_mmgp("launch raxml-qs20 --launcher openmpi --m 2 --p 1 --exec -- " + exe + " p={p}");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(lines(r.out) == std::multiset<std::string>{"rank 0 of 2 threads 1 arg p=1", "rank 1 of 2 threads 1 arg p=1"});
    // m = 3 processes of p = 2: more than the cores of a small machine; --oversubscribe lets mpirun start.
    r = run_mmgp("launch raxml-qs20 --launcher openmpi --m 3 --p 2 --cores-per-node 2 --oversubscribe --exec -- " + exe);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(lines(r.out) == std::multiset<std::string>{"rank 0 of 3 threads 2 arg -", "rank 1 of 3 threads 2 arg -",
                                                     "rank 2 of 3 threads 2 arg -"});
}

TEST_CASE("--no-bind takes effect with every launcher, and unbound processes get OMP_PROC_BIND=false, no places") {
    auto has = [](const strings& argv, const std::string& w) { return std::find(argv.begin(), argv.end(), w) != argv.end(); };
    auto starts = [](const strings& argv, const std::string& prefix) {
        return std::any_of(argv.begin(), argv.end(), [&](const std::string& w) { return w.find(prefix) != std::string::npos; });
    };
    for (launcher_kind k : {launcher_kind::openmpi, launcher_kind::mpich, launcher_kind::srun}) {
        auto rq = request(k, 2, 2, 1, 8);
        auto bound = mmgp::render_launch(rq, {"./app"});
        CHECK(starts(bound.argv, "OMP_PROC_BIND"));
        rq.bind = false;
        auto plan = mmgp::render_launch(rq, {"./app"});
        CHECK((k == launcher_kind::srun ? has(plan.argv, "--cpu-bind=none") : has(plan.argv, "none")));
        CHECK_FALSE(has(plan.argv, "core"));
        std::string line;  // MPICH's -genv takes the name and the value as two words
        for (const auto& w : plan.argv) line += w + " ";
        CHECK((line.find("OMP_PROC_BIND=false") != std::string::npos ||
               line.find("OMP_PROC_BIND false ") != std::string::npos));
        CHECK_FALSE(starts(plan.argv, "close"));
        CHECK_FALSE(starts(plan.argv, "OMP_PLACES"));
        CHECK(starts(plan.argv, "OMP_NUM_THREADS"));
        CHECK(plan.notes.empty());  // not bound on request: nothing to explain
    }
    // The local launcher without CPUs to bind to (--no-bind): no taskset, no thread placement.
    auto local = mmgp::render_launch(request(launcher_kind::local, 2, 2, 1, 0), {"./app"});
    REQUIRE(local.processes.size() == 2);
    for (const auto& lp : local.processes) {
        CHECK(lp.argv.front() == "./app");
        CHECK(std::any_of(lp.env.begin(), lp.env.end(),
                          [](const auto& kv) { return kv.first == "OMP_PROC_BIND" && kv.second == "false"; }));
        CHECK(std::none_of(lp.env.begin(), lp.env.end(), [](const auto& kv) { return kv.first == "OMP_PLACES"; }));
    }
}

TEST_CASE("local --exec, unbound: a thread placement in the user's environment does not reach the processes") {
    // Inherited, OMP_PROC_BIND=close would put every process's threads on the node's first cores.
    ::setenv("OMP_PROC_BIND", "close", 1);
    ::setenv("OMP_PLACES", "cores", 1);
    auto r = run_mmgp("launch raxml-qs20 --launcher local --m 2 --p 1 --no-bind --exec -- "
                      "sh -c 'echo \"${OMP_PROC_BIND-unset}/${OMP_PLACES-unset}\"'");
    ::unsetenv("OMP_PROC_BIND");
    ::unsetenv("OMP_PLACES");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == "false/cores\nfalse/cores\n");
}

TEST_CASE("local: the printed line runs what --exec runs, whatever the program's first word") {
    // A first word with '=' would read as an assignment, a reserved word or builtin as the shell's own.
    mmgp::test::temp_dir d;
    const std::string marker = (d.path / "ran").string();
    for (const std::string name : {"X=1", "exec", "echo"}) {
        const std::string prog = (d.path / name).string();
        d.write(name, "#!/bin/sh\necho \"$0 $1\" >> " + marker + "\n");
        std::filesystem::permissions(prog, std::filesystem::perms::owner_all);
        auto rq = request(launcher_kind::local, 1, 1, 1, 0);
        const auto plan = mmgp::render_launch(rq, {name, "arg"});
        const std::string line = mmgp::shell_command(plan);
        CAPTURE(line);
        CHECK(line.find(name == "X=1" ? "'X=1' arg" : "env " + name + " arg") != std::string::npos);
        const std::string cmd = "cd " + d.path.string() + " && PATH=" + d.path.string() + ":$PATH sh -c " +
                                mmgp::shell_quote(line) + " >/dev/null 2>&1";
        CHECK(std::system(cmd.c_str()) == 0);
    }
    const std::string ran = mmgp::test::slurp(marker);
    CHECK(ran.find("X=1 arg") != std::string::npos);
    CHECK(ran.find("exec arg") != std::string::npos);
    CHECK(ran.find("echo arg") != std::string::npos);
}

TEST_CASE("local: the printed lines give the processes the shell's input, and a terminated shell takes them along") {
    // A shell without job control starts background commands on /dev/null and ignoring SIGINT; --exec forwards
    // its input and its signals.
    mmgp::test::temp_dir d;
    d.write("in.txt", "from stdin\n");
    auto rq = request(launcher_kind::local, 1, 1, 1, 0);
    const std::string cat_line = mmgp::shell_command(mmgp::render_launch(rq, {"cat"}));
    const std::string out = (d.path / "out.txt").string();
    const std::string cat_cmd = "sh -c " + mmgp::shell_quote(cat_line) + " < " + (d.path / "in.txt").string() + " > " + out;
    CAPTURE(cat_line);
    CHECK(std::system(cat_cmd.c_str()) == 0);
    CHECK(mmgp::test::slurp(out) == "from stdin\n");
    // A closed input is /dev/null: the processes run all the same (once nothing ran, and the status said 0).
    const std::string ran = (d.path / "ran").string();
    const std::string closed_line = mmgp::shell_command(mmgp::render_launch(rq, {"sh", "-c", "echo ran > " + ran}));
    CHECK(std::system(("sh -c " + mmgp::shell_quote(closed_line) + " <&- 2>/dev/null").c_str()) == 0);
    CHECK(mmgp::test::slurp(ran) == "ran\n");
    // The shell is sent SIGTERM once its process has started: the process must not outlive it.
    const std::string pid_file = (d.path / "pid").string();
    const std::string sleep_line = mmgp::shell_command(
        mmgp::render_launch(rq, {"sh", "-c", "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file +
                                                 " && exec sleep 30"}));
    CAPTURE(sleep_line);
    // The shell then ends by the signal: what follows the lines does not run.
    const std::string after = (d.path / "after").string();
    const std::string script = "sh -c " + mmgp::shell_quote(sleep_line + "touch " + after + "\n") + " & s=$!; i=0; "
                               "while [ ! -s " + pid_file + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
                               "kill -TERM $s; wait $s; rc=$?; sleep 0.2; p=$(cat " + pid_file + "); "
                               "if kill -0 $p 2>/dev/null; then kill $p; exit 1; fi; exit $rc";  // a zombie would count as alive
    CHECK(WEXITSTATUS(std::system(("sh -c " + mmgp::shell_quote(script)).c_str())) == 128 + SIGTERM);
    CHECK_FALSE(std::filesystem::exists(after));
}

TEST_CASE("a GPU mapping: p is SMs, one host core per process, MPS's percentage and the device list") {
    // ⌈100·p/A⌉ on a 132-SM GPU: 33 SMs are a quarter; one SM still asks for 1 %; never above 100.
    CHECK(mmgp::mps_percentage(33, 132) == 25);
    CHECK(mmgp::mps_percentage(1, 132) == 1);
    CHECK(mmgp::mps_percentage(67, 132) == 51);
    CHECK(mmgp::mps_percentage(132, 132) == 100);
    CHECK(mmgp::mps_percentage(200, 132) == 100);
    CHECK(mmgp::mps_percentage(5, 0) == 100);
    launch_request rq = request(launcher_kind::openmpi, 4, 33, 1, 16);
    rq.mapping.share = mmgp::accelerator_sharing::mps;
    rq.accelerators = 132;
    rq.devices = "0";
    const mmgp::launch_plan plan = mmgp::render_launch(rq, {"./a.out"});
    const strings expected = {"mpirun", "-np", "4", "--map-by", "ppr:4:node:pe=1", "--bind-to", "core",
                              "-x", "OMP_NUM_THREADS=1", "-x", "OMP_PLACES=cores", "-x", "OMP_PROC_BIND=close",
                              "-x", "MMGP_M=4", "-x", "MMGP_P=33", "-x", "MMGP_NODES=1", "-x", "MMGP_NP=4",
                              "-x", "MMGP_UNITS_TOTAL=10", "-x", "MMGP_SHARING=mps", "-x", "CUDA_VISIBLE_DEVICES=0",
                              "-x", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25", "./a.out"};
    CHECK(plan.argv == expected);
    REQUIRE(plan.notes.size() == 1);
    CHECK(plan.notes[0].find("nvidia-cuda-mps-control -d") != std::string::npos);
    // Time-sliced: no MPS variable, no daemon note; 4·132 SMs oversubscribe nothing on 16 host cores.
    rq.mapping.share = mmgp::accelerator_sharing::time_sliced;
    rq.mapping.p = 132;
    const mmgp::launch_plan sliced = mmgp::render_launch(rq, {"./a.out"});
    CHECK(sliced.notes.empty());
    CHECK(std::find(sliced.argv.begin(), sliced.argv.end(), "MMGP_SHARING=time_sliced") != sliced.argv.end());
    CHECK(std::none_of(sliced.argv.begin(), sliced.argv.end(),
                       [](const std::string& w) { return w.rfind("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", 0) == 0; }));
    CHECK(std::find(sliced.argv.begin(), sliced.argv.end(), "ppr:4:node:pe=1") != sliced.argv.end());
}
