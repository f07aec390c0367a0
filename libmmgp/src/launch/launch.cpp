// Rendering a mapping as a launch command (mmgp/launch.hpp). Pure: no I/O, no environment.
#include "mmgp/launch.hpp"

#include <algorithm>
#include <string>

namespace mmgp {

std::string_view to_string(launcher_kind k) noexcept {
    switch (k) {
        case launcher_kind::openmpi: return "openmpi";
        case launcher_kind::mpich: return "mpich";
        case launcher_kind::srun: return "srun";
        case launcher_kind::local: return "local";
    }
    return "local";
}

bool parse_launcher(std::string_view text, launcher_kind& out) noexcept {
    for (auto k : {launcher_kind::openmpi, launcher_kind::mpich, launcher_kind::srun, launcher_kind::local})
        if (text == to_string(k)) {
            out = k;
            return true;
        }
    return false;
}

std::int64_t units_of_rank(std::int64_t units, std::int64_t procs, std::int64_t rank) noexcept {
    if (procs < 1 || units < 0) return 0;
    return units / procs + (rank < units % procs ? 1 : 0);
}

std::string shell_quote(std::string_view word) {
    if (word.empty()) return "''";
    bool safe = true;
    for (char c : word) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                  c == '.' || c == '/' || c == ':' || c == ',' || c == '=' || c == '+' || c == '@' || c == '%';
        if (!ok) {
            safe = false;
            break;
        }
    }
    if (safe) return std::string(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

namespace {

struct values {
    std::int64_t m, p, nodes, np, U, rank, units;
    bool per_rank;  // {rank} and {units} are known
};

void replace_all(std::string& s, std::string_view key, const std::string& value) {
    for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
        s.replace(at, key.size(), value);
}

std::string substitute(std::string word, const values& v) {
    if (word.find('{') == std::string::npos) return word;
    replace_all(word, "{m}", std::to_string(v.m));
    replace_all(word, "{p}", std::to_string(v.p));
    replace_all(word, "{nodes}", std::to_string(v.nodes));
    replace_all(word, "{np}", std::to_string(v.np));
    replace_all(word, "{U}", std::to_string(v.U));
    if (v.per_rank) {
        replace_all(word, "{rank}", std::to_string(v.rank));
        replace_all(word, "{units}", std::to_string(v.units));
    }
    return word;
}

std::string cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        if (i) out += ',';
        out += std::to_string(cpus[i]);
    }
    return out;
}

constexpr int max_local_processes = 4096;  // as mmgp-offload-run's threads: far beyond any node's cores

[[noreturn]] void fail(const std::string& what, const std::string& expected, const std::string& found) {
    throw error(what + ": expected " + expected + ", found " + found);
}

// The request and the command, refused before anything is rendered: a program, a mapping of at least one of
// each, counts >= 0, one node for the local launcher, and no per-process placeholder on an MPI launcher's line.
void check_request(const launch_request& rq, const std::vector<std::string>& command) {
    const configuration& c = rq.mapping;
    if (command.empty() || command.front().empty())
        fail("COMMAND", "a program to launch after --", command.empty() ? "nothing" : "an empty word");
    if (c.m < 1 || c.p < 1 || c.nodes < 1)
        fail("mapping", "m, p and nodes >= 1",
             "m=" + std::to_string(c.m) + " p=" + std::to_string(c.p) + " nodes=" + std::to_string(c.nodes));
    if (rq.units < 0) fail("units", "a count >= 0", std::to_string(rq.units));
    if (rq.cores_per_node < 0) fail("cores per node", "a count >= 0 (0 = unknown)", std::to_string(rq.cores_per_node));
    if (rq.kind == launcher_kind::local && c.nodes != 1)
        fail("--launcher local", "nodes = 1 (the local launcher starts processes on this machine)",
             "nodes=" + std::to_string(c.nodes));
    // The local launcher starts every process on this machine (and prints a line each): a million would exhaust
    // memory before the first ran.
    if (rq.kind == launcher_kind::local && c.m > max_local_processes)
        fail("--launcher local", "at most " + std::to_string(max_local_processes) +
                                     " processes (the local launcher starts each on this machine)",
             "m=" + std::to_string(c.m));
    if (rq.kind == launcher_kind::local) return;
    if (command.front()[0] == '-')  // the launcher would read it as one of its own options
        fail("COMMAND", "a program after -- (" + std::string(to_string(rq.kind)) +
                            "'s launcher would read a word starting with '-' as its own option; ./" + command.front() +
                            " names a file of that name)",
             shell_quote(command.front()));
    // mpirun, mpiexec and srun read a lone ':' anywhere on their line as the start of another program (MPMD, a
    // heterogeneous step): the program would get the words before it only, and the words after it would start.
    for (std::size_t i = 1; i < command.size(); ++i)
        if (command[i] == ":")
            fail("COMMAND", "arguments that " + std::string(to_string(rq.kind)) + "'s launcher passes to the program "
                            "(it reads a lone ':' as the start of another program; pass it through a script)",
                 "':' as word " + std::to_string(i + 1));
    for (const auto& w : command)
        for (std::string_view key : {"{rank}", "{units}"})
            if (w.find(key) != std::string::npos)
                fail("COMMAND", "placeholders {m} {p} {nodes} {np} {U} with --launcher " + std::string(to_string(rq.kind)) +
                                    " (" + std::string(key) + " differs per process: use --launcher local, or read "
                                    "the launcher's rank variable and MMGP_UNITS_TOTAL)",
                     shell_quote(w));
}

using environment = std::vector<std::pair<std::string, std::string>>;

// Host cores one process uses: its p worker threads, or one host thread driving p SMs of a shared GPU.
std::int64_t host_threads(const launch_request& rq) noexcept {
    return rq.mapping.share == accelerator_sharing::dedicated ? rq.mapping.p : 1;
}

// What the host cores of a node are asked for: m*p worker threads, or m processes driving a shared GPU.
std::string threads_word(const launch_request& rq) {
    return rq.mapping.share == accelerator_sharing::dedicated ? "m*p" : "m (one host thread per GPU process)";
}

// A GPU mapping's variables: the sharing mode, the GPU, and under MPS each client's share of the SMs (MPS caps
// a client's SMs at this percentage; it does not make the clients' SMs disjoint).
void add_gpu_environment(const launch_request& rq, environment& env) {
    const configuration& c = rq.mapping;
    env.emplace_back("MMGP_SHARING", std::string(to_string(c.share)));
    if (!rq.devices.empty()) env.emplace_back("CUDA_VISIBLE_DEVICES", rq.devices);
    if (c.share == accelerator_sharing::mps && rq.accelerators > 0)
        env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::to_string(mps_percentage(c.p, rq.accelerators)));
}

// The variables every process gets: OpenMP's threads and placement, and the mapping.
environment mapping_environment(const launch_request& rq) {
    const configuration& c = rq.mapping;
    const std::int64_t m = c.m, p = c.p, nodes = c.nodes, np = m * nodes;
    const std::string ps = std::to_string(p);
    environment env{{"OMP_NUM_THREADS", std::to_string(host_threads(rq))},
                    {"OMP_PLACES", "cores"},
                    {"OMP_PROC_BIND", "close"},
                    {"MMGP_M", std::to_string(m)},
                    {"MMGP_P", ps},
                    {"MMGP_NODES", std::to_string(nodes)},
                    {"MMGP_NP", std::to_string(np)},
                    {"MMGP_UNITS_TOTAL", std::to_string(rq.units)}};
    if (c.share != accelerator_sharing::dedicated) add_gpu_environment(rq, env);
    return env;
}

// Threads are placed on cores only inside a bound process: unbound, OMP_PROC_BIND=close would put every
// process's threads on the node's first p cores. OMP_PROC_BIND=false, not its absence: a placement in the user's
// own environment would reach the processes and pile them up the same way.
void unbind(environment& env) {
    std::erase_if(env, [](const auto& kv) { return kv.first == "OMP_PLACES"; });
    for (auto& kv : env)
        if (kv.first == "OMP_PROC_BIND") kv.second = "false";
}

// --launcher local: one process per rank on this machine, each bound to its own p CPUs when they suffice.
void add_local_processes(const launch_request& rq, const std::vector<std::string>& command, environment env,
                         launch_plan& plan) {
    const std::int64_t m = rq.mapping.m, p = host_threads(rq), np = m * rq.mapping.nodes;
    const std::int64_t ncpu = static_cast<std::int64_t>(rq.cpus.size());
    const bool bind = ncpu > 0 && m * p <= ncpu;
    if (ncpu > 0 && !bind)
        plan.notes.push_back("not binding: " + threads_word(rq) + " = " + std::to_string(m * p) + " exceeds the " + std::to_string(ncpu) +
                             " CPUs available; the OS places the processes");
    if (!bind) unbind(env);
    values v{m, rq.mapping.p, rq.mapping.nodes, np, rq.units, 0, 0, true};
    for (std::int64_t r = 0; r < m; ++r) {
        launch_process lp;
        lp.rank = static_cast<int>(r);
        lp.units = units_of_rank(rq.units, np, r);
        v.rank = r;
        v.units = lp.units;
        if (bind) {
            for (std::int64_t j = 0; j < p; ++j) lp.cpus.push_back(rq.cpus[static_cast<std::size_t>(r * p + j)]);
            lp.argv = {"taskset", "-c", cpu_list(lp.cpus)};
        }
        for (const auto& w : command) lp.argv.push_back(substitute(w, v));
        lp.env = env;
        lp.env.emplace_back("MMGP_RANK", std::to_string(r));
        lp.env.emplace_back("MMGP_UNITS", std::to_string(lp.units));
        plan.processes.push_back(std::move(lp));
    }
}

// srun --overcommit: asked for (--oversubscribe) and needed, more processes than cores or cores unknown. Where
// the m processes fit the cores it would cost CPUs: Slurm then allocates --cpus-per-task once per node, not per
// task (-n 2 --cpus-per-task=1 --overcommit on a 2-CPU node: both tasks on CPU 0).
bool srun_overcommit(const launch_request& rq) noexcept {
    return rq.oversubscribe && !(rq.cores_per_node > 0 && rq.mapping.m <= rq.cores_per_node);
}

// The CPUs srun asks for each task: its p threads' own; when the node has fewer than m*p cores (binding
// dropped), an equal share of them, so that the m tasks fit the node and their threads time-share its cores, as
// mpirun's and mpiexec's unbound processes do (--cpus-per-task=p on such a node: Slurm refuses the step, "More
// processors requested than permitted", or a new job waits for resources no node has); overcommitted, the
// node's cores, allocated once for all its tasks.
std::int64_t srun_cpus_per_task(const launch_request& rq) noexcept {
    const std::int64_t m = rq.mapping.m, p = host_threads(rq), cores = rq.cores_per_node;
    if (cores <= 0 || m * p <= cores) return p;
    if (srun_overcommit(rq)) return cores;
    return std::max<std::int64_t>(1, cores / m);
}

// What an MPI launcher line cannot do as asked: bind p cores per process, or start more processes than cores.
void add_launcher_notes(const launch_request& rq, bool bind, launch_plan& plan) {
    const std::int64_t m = rq.mapping.m, p = host_threads(rq), cores = rq.cores_per_node;
    const std::int64_t cpt = srun_cpus_per_task(rq);
    const std::string srun_share =
        rq.kind == launcher_kind::srun && cpt < p
            ? "; srun asks " + std::to_string(cpt) + " CPU" + (cpt == 1 ? "" : "s") +
                  (srun_overcommit(rq) ? " per node (--cpus-per-task=" : " per task (--cpus-per-task=") +
                  std::to_string(cpt) + "), " + std::to_string(m * cpt) + " of the node's " + std::to_string(cores) +
                  " cores time-shared by the processes' threads"
            : std::string();
    if (!bind && rq.bind)
        plan.notes.push_back(threads_word(rq) + " = " + std::to_string(m * p) + " exceeds the " + std::to_string(cores) +
                             " cores per node: binding " + std::to_string(p) +
                             " cores per process cannot be satisfied, so processes are not bound (the OS places "
                             "their threads)" + srun_share);
    else if (!srun_share.empty())
        plan.notes.push_back(threads_word(rq) + " = " + std::to_string(m * p) + " exceeds the " + std::to_string(cores) +
                             " cores per node" + srun_share);
    if (cores > 0 && m > cores && !rq.oversubscribe)
        plan.notes.push_back("m = " + std::to_string(m) + " processes per node exceed the " + std::to_string(cores) +
                             " cores per node: " +
                             (rq.kind == launcher_kind::mpich ? std::string("mpiexec runs them time-shared")
                                                              : std::string("the launcher will refuse to start; add --oversubscribe")));
}

// The MPI launcher's own words: the process counts, the binding and the environment, before the command.
std::vector<std::string> launcher_words(const launch_request& rq, bool bind, const environment& env) {
    const std::int64_t m = rq.mapping.m, nodes = rq.mapping.nodes;
    const std::string ps = std::to_string(host_threads(rq)), ms = std::to_string(m), nps = std::to_string(m * nodes);
    const std::string cpt = std::to_string(srun_cpus_per_task(rq));
    std::vector<std::string> a;
    switch (rq.kind) {
        case launcher_kind::openmpi:
            a = {rq.program.empty() ? "mpirun" : rq.program, "-np", nps, "--map-by",
                 bind ? "ppr:" + ms + ":node:pe=" + ps : "ppr:" + ms + ":node", "--bind-to", bind ? "core" : "none"};
            if (rq.oversubscribe) a.push_back("--oversubscribe");
            if (rq.allow_run_as_root) a.push_back("--allow-run-as-root");
            for (const auto& [k, val] : env) {
                a.push_back("-x");
                a.push_back(k + "=" + val);
            }
            break;
        case launcher_kind::mpich:
            a = {rq.program.empty() ? "mpiexec" : rq.program, "-n", nps, "-ppn", ms, "-bind-to",
                 bind ? "core:" + ps : "none"};
            for (const auto& [k, val] : env) {
                a.push_back("-genv");
                a.push_back(k);
                a.push_back(val);
            }
            break;
        case launcher_kind::srun: {
            a = {rq.program.empty() ? "srun" : rq.program, "-N", std::to_string(nodes), "-n", nps,
                 "--ntasks-per-node=" + ms, "--cpus-per-task=" + cpt, bind ? "--cpu-bind=cores" : "--cpu-bind=none"};
            if (srun_overcommit(rq)) a.push_back("--overcommit");
            std::string exp = "--export=ALL";
            for (const auto& [k, val] : env) exp += "," + k + "=" + val;
            a.push_back(exp);
            break;
        }
        case launcher_kind::local: break;
    }
    return a;
}

}  // namespace

int mps_percentage(int p, int accelerators) noexcept {
    if (accelerators <= 0) return 100;
    const std::int64_t pct = (std::int64_t{100} * p + accelerators - 1) / accelerators;  // rounded up: at least p SMs
    return static_cast<int>(std::clamp<std::int64_t>(pct, 1, 100));
}

launch_plan render_launch(const launch_request& rq, const std::vector<std::string>& command) {
    check_request(rq, command);
    launch_plan plan;
    plan.kind = rq.kind;
    plan.mapping = rq.mapping;
    plan.units = rq.units;
    environment env = mapping_environment(rq);
    if (rq.mapping.share == accelerator_sharing::mps && rq.mapping.m > 1)
        plan.notes.push_back("MPS: the control daemon must run on every node before the processes start "
                             "(nvidia-cuda-mps-control -d); without it their kernels are time-sliced");
    if (rq.kind == launcher_kind::local) {
        add_local_processes(rq, command, std::move(env), plan);
        return plan;
    }
    const configuration& c = rq.mapping;
    const bool bind = rq.bind && (rq.cores_per_node == 0 || std::int64_t{c.m} * host_threads(rq) <= rq.cores_per_node);
    if (!bind) unbind(env);
    add_launcher_notes(rq, bind, plan);
    plan.argv = launcher_words(rq, bind, env);
    const values v{c.m, c.p, c.nodes, std::int64_t{c.m} * c.nodes, rq.units, 0, 0, false};
    for (const auto& w : command) plan.argv.push_back(substitute(w, v));
    return plan;
}

namespace {
// Words a POSIX shell reads as something other than the program of that name in command position: reserved
// words, the special and regular builtins of POSIX, and those bash and dash add (echo, printf, test, kill, ...
// are programs too, but a shell runs its own).
bool shell_word_not_a_program(std::string_view w) {
    static constexpr std::string_view words[] = {
        "!", "{", "}", "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then", "until", "while",
        "function", "select", "time", "[[", "]]", ".", ":", "break", "continue", "eval", "exec", "exit", "export",
        "readonly", "return", "set", "shift", "times", "trap", "unset", "alias", "bg", "cd", "command", "fc", "fg",
        "getopts", "hash", "jobs", "read", "type", "ulimit", "umask", "unalias", "wait", "source", "local", "echo",
        "printf", "test", "[", "kill", "true", "false", "pwd", "let", "declare", "typeset", "builtin", "enable",
        "shopt", "dirs", "pushd", "popd", "disown", "suspend", "logout", "mapfile", "readarray", "caller", "compgen",
        "complete", "compopt", "help", "history", "newgrp", "bind", "chdir"};
    return std::find(std::begin(words), std::end(words), w) != std::end(words);
}
}  // namespace

std::string shell_command(const launch_plan& plan) {
    std::string out;
    // The first word is the command: one with '=' quoted, so that a shell after the assignments of a local line
    // cannot read it as one more (MPI lines start with the launcher, which has none).
    auto words = [&](const std::vector<std::string>& argv) {
        for (std::size_t i = 0; i < argv.size(); ++i) {
            if (i) out += ' ';
            std::string w = shell_quote(argv[i]);
            if (i == 0 && argv[0].find('=') != std::string::npos && w.front() != '\'') w = "'" + w + "'";
            out += w;
        }
    };
    if (plan.kind != launcher_kind::local) {
        words(plan.argv);
        return out + "\n";
    }
    // As --exec runs them: an interrupt or a termination of the shell reaches every process (a shell without job
    // control starts them ignoring SIGINT, so they are sent SIGTERM), no process starts after it, and the shell then
    // ends by that signal (a script's next lines do not run); the trap removes itself at once (a shell the lines
    // were pasted into keeps none, whatever became of the lines after). Each process reads the shell's standard
    // input (a shell without job control gives them /dev/null unless told otherwise: fd 3 carries it past that;
    // a closed input is /dev/null).
    out += "mmgp_pids= mmgp_stop=\n"
           "trap 'mmgp_stop=INT; trap - INT TERM; kill $mmgp_pids 2>/dev/null' INT\n"
           "trap 'mmgp_stop=TERM; trap - INT TERM; kill $mmgp_pids 2>/dev/null' TERM\n"
           "true 2>/dev/null 3<&0 || exec </dev/null\n{\n";
    for (const auto& lp : plan.processes) {
        out += "[ -n \"$mmgp_stop\" ] || { ";
        for (const auto& [k, val] : lp.env) out += k + "=" + shell_quote(val) + " ";
        // The command after the assignments, as execvp would take it (what --exec runs): a reserved word or a
        // builtin would not be the program of that name (env runs it).
        if (!lp.argv.empty() && shell_word_not_a_program(lp.argv[0])) out += "env ";
        words(lp.argv);
        out += " <&3 3<&- & mmgp_pids=\"$mmgp_pids $!\"; }\n";
    }
    // The status --exec ends with: the first non-zero in rank order (each process leaves the list once waited
    // for: a late signal is sent to no reused pid); after a signal, those not yet waited for are (a wait the trap
    // interrupted reaped none) before the shell ends by it. `(exit N)` sets the status without ending a shell the
    // lines were pasted into.
    return out + "} 3<&0\nmmgp_status=0\nfor mmgp_pid in $mmgp_pids; do wait \"$mmgp_pid\"; mmgp_rc=$?; "
                 "[ -n \"$mmgp_stop\" ] || mmgp_pids=${mmgp_pids#\" $mmgp_pid\"}; [ \"$mmgp_status\" -ne 0 ] || "
                 "mmgp_status=$mmgp_rc; done\n"
                 "trap - INT TERM\n[ -z \"$mmgp_stop\" ] || { wait $mmgp_pids; kill -s \"$mmgp_stop\" $$; }\n"
                 "(exit \"$mmgp_status\")\n";
}

}  // namespace mmgp
