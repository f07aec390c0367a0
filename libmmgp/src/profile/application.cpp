// The application profile: its key table (mmgp/profile_keys.hpp) and its reader. The table is the one list of the
// application's keys: the reader accepts those keys and names each by the member it fills, the uncertainty
// sampler varies those marked log_normal, docs/PROFILES.md's table is checked against it. The reader goes step by
// step (the program's form first: a wavefront makes the work keys optional). Called by the scenario reader and
// the public load/parse functions; calls the shared value readers and the JSON reader.
#include <cmath>
#include <stdexcept>

#include "profile/profile_json.hpp"

namespace mmgp {

namespace {

using enum key_sampling;

// Each row names the fields it sets; the others take application_key's defaults (optional, no unit, fixed, none shown).
constexpr application_key application_key_table[] = {
    {.name = "decomposition", .member = &application::decomp, .shown_default = "`data`",
     .meaning = "`data`: every process repeats the host work and splits T_apu ([H] Eq. 11); `task`: `units` "
     "independent units"},
    {.name = "scaling", .member = &application::scale, .shown_default = "`strong`",
     .meaning = "over nodes: `strong` (problem fixed) or `weak` (work per node fixed)"},
    {.name = "N", .required = true, .unit = "off-loading phases", .member = &application::N, .spread = log_normal,
     .meaning = "off-loading phases per run (`data`) or per unit (`task`)"},
    {.name = "T_hpu", .required = true, .unit = "seconds", .member = &application::T_hpu, .spread = log_normal,
     .meaning = "s, host time, 1 HPU (per run, or per unit)"},
    {.name = "T_apu", .required = true, .unit = "seconds", .member = &application::T_apu, .spread = log_normal,
     .meaning = "s, parallelisable accelerator time, 1 HPU + 1 APU"},
    {.name = "C_apu", .required = true, .unit = "seconds", .member = &application::C_apu, .spread = log_normal,
     .meaning = "s, accelerator time that cannot be split across APUs"},
    {.name = "g", .required = true, .unit = "seconds per phase per APU", .member = &application::g,
     .spread = log_normal,
     .meaning = "s, gap between consecutive off-loads, **per phase** per APU (a run total divided by N)"},
    {.name = "O_col", .member = &application::O_col, .shown_default = "0",
     .meaning = "s per phase, synchronisation with m processes: a number (m ≥ 2) or `{\"table\": {...}}`; O_col(1) = "
     "0 unless the table gives it"},
    {.name = "units", .member = &application::units, .shown_default = "1",
     .meaning = "U, number of task units (bootstraps); required with `task`"},
    {.name = "dma_bytes", .unit = "bytes per off-load", .member = &application::dma_bytes, .spread = log_normal,
     .shown_default = "0", .meaning = "bytes per off-load not overlapped with computation (needs `platform.dma`)"},
    {.name = "communication", .member = &application::comm,
     .meaning = "per phase: `[{\"primitive\": \"allreduce\", \"bytes\": 8, \"count\": 1}]` (bytes and count each at "
                "most 10^15)"},
    {.name = "g_charge", .member = &application::g_charge, .shown_default = "`per_apu`",
     .meaning = "`per_apu`: the gap costs N·p·g ([H] Eq. 11); `per_extra_apu`: N·(p−1)·g (g measured as the slope "
     "per additional APU, as `mmgp profile` does)"},
    {.name = "spin_limit", .member = &application::spin_limit, .shown_default = "0",
     .meaning = "spin-wait iterations before the program's waiting threads block, or `\"unbounded\"` (RAxML's "
     "barriers); 0 = they block at once, no spin-convoy term"},
    {.name = "T_start", .unit = "seconds per process", .member = &application::T_start, .spread = log_normal,
     .shown_default = "0",
     .meaning = "s, start-up of one process (input, set-up), paid once per process, not per unit (`mmgp fit "
     "--fit-T-start`)"},
    {.name = "N_start", .unit = "off-loads of the start-up, per process", .member = &application::N_start,
     .spread = log_normal, .shown_default = "0",
     .meaning = "off-loads (synchronisations) of that start-up, per process. T_start holds their dedicated time; "
     "with a time-shared platform each also pays the first round's edtlp switch and spin convoy, like a unit's "
     "off-loads (RAxML: its parsimony and model set-up, counted by `validation/raxml_barriers.py`)"},
    {.name = "T_offload_idle", .unit = "seconds per off-load", .member = &application::T_offload_idle,
     .spread = log_normal,
     .meaning = "s, with a time-shared platform: the program's own per-off-load overhead in its sequential edtlp run "
     "(HPU round trip minus APU busy time, written by `mmgp profile`); the idle-core wake-up is then T_offload_idle "
     "− O_offload instead of the platform's T_wake"},
    {.name = "waits_per_offload", .unit = "waits per off-load", .member = &application::waits_per_offload,
     .spread = log_normal, .shown_default = "1",
     .meaning = "times an off-load's host waits for the accelerator (the grids it synchronises on, counted by `mmgp "
     "profile --accelerator cuda`); with a time-sliced accelerator and m > 1 processes each is a switch "
     "T_slice_switch (docs/MODEL.md §7)"},
    {.name = "slot_time", .member = &application::slot_time,
     .meaning = "`[[1, 1], [2, f2], ...]`: the program's own kernel's time against the blocks per accelerator "
     "(measured on a GPU); without it the platform's `slot_time`"},
    {.name = "wavefront", .member = &application::wave,
     .meaning = "a wavefront sweep (Sweep3D-like) that `mmgp predict` maps accelerator-driven and host-driven "
     "(below, docs/MODEL.md §6); with it, `N`, `T_hpu`, `T_apu`, `C_apu` and `g` may be left out"},
};

}  // namespace

std::span<const application_key> application_keys() noexcept { return application_key_table; }

namespace detail {

namespace {

constexpr std::int64_t max_count = 1000000000000LL;  // units, spin iterations

// The row of the key that fills `member`.
template <class T>
const application_key& key(T application::*member) {
    for (const application_key& k : application_key_table)
        if (const auto* m = std::get_if<T application::*>(&k.member); m && *m == member) return k;
    throw std::logic_error("no application key fills this member");
}

// application.wavefront (docs/PROFILES.md).
wavefront read_wavefront(const json& v, const reader& r, const std::string& path) {
    r.object(v, path);
    r.known_keys(v, path, {"cells_per_rank", "cells", "angles", "k_block", "octants", "fills", "iterations", "t_cell_s",
                           "bytes_per_value", "dma_s_per_cell", "control_s_per_cell"});
    wavefront w;
    const bool pr = v.contains("cells_per_rank"), tot = v.contains("cells");
    if (pr == tot) r.fail(path, "exactly one of \"cells_per_rank\" and \"cells\"", pr ? "both" : "neither");
    w.per_rank = pr;
    const std::string cp = child(path, pr ? "cells_per_rank" : "cells");
    const json& c = v[pr ? "cells_per_rank" : "cells"];
    if (!c.is_array() || c.size() != 3) r.fail(cp, "[I, J, K] cells", c);
    for (std::size_t i = 0; i < 3; ++i) w.cells[i] = r.number(c[i], child(cp, i), above(0.0, "cells"));
    w.angles = r.number_or(v, path, "angles", 1.0, above(0.0, "angles per octant"));
    w.k_block = r.number_or(v, path, "k_block", 1.0, above(0.0, "K planes per block"));
    if (w.k_block > w.cells[2]) r.fail(child(path, "k_block"), "at most the K cells (" + format_double(w.cells[2]) + ")", v["k_block"]);
    w.octants = r.number_or(v, path, "octants", 8.0, above(0.0, "sweeps per iteration"));
    w.fills = r.number_or(v, path, "fills", w.octants, at_least(0.0, "pipeline fills per iteration"));
    if (w.fills > w.octants) r.fail(child(path, "fills"), "at most the octants (" + format_double(w.octants) + ")", v["fills"]);
    w.iterations = r.number_or(v, path, "iterations", 1.0, above(0.0, "iterations"));
    w.t_cell_s = r.number_at(v, path, "t_cell_s", above(0.0, "seconds per cell and angle"));
    w.bytes_per_value = r.number_or(v, path, "bytes_per_value", 8.0, above(0.0, "bytes"));
    w.has_host_driven = v.contains("dma_s_per_cell") || v.contains("control_s_per_cell");
    w.dma_s_per_cell = r.number_or(v, path, "dma_s_per_cell", 0.0, at_least(0.0, "seconds per cell and angle"));
    w.control_s_per_cell = r.number_or(v, path, "control_s_per_cell", 0.0, at_least(0.0, "seconds per cell and angle"));
    return w;
}

// application.communication: [{"primitive", "bytes", "count"}, ...].
std::vector<comm_pattern> read_communication(const json& cs, const reader& r, const std::string& cp) {
    if (!cs.is_array()) r.fail(cp, "an array of {\"primitive\", \"bytes\", \"count\"}", cs);
    std::vector<comm_pattern> out;
    for (std::size_t i = 0; i < cs.size(); ++i) {
        const std::string ip = child(cp, i);
        r.object(cs[i], ip);
        r.known_keys(cs[i], ip, {"primitive", "bytes", "count"});
        comm_pattern p;
        p.prim = read_primitive(cs[i], r, ip);
        p.bytes = r.number_at(cs[i], ip, "bytes", at_least(0.0, "bytes per operation"));
        p.count = r.number_or(cs[i], ip, "count", 1.0, at_least(0.0, "operations per phase"));
        // At most a petabyte an operation and 10^15 operations a phase, as every amount (1e300 bytes printed
        // times of 300 digits).
        if (p.bytes > max_amount)
            r.fail(child(ip, "bytes"), "at most " + format_double(max_amount) + " bytes per operation", cs[i]["bytes"]);
        if (p.count > max_amount)
            r.fail(child(ip, "count"), "at most " + format_double(max_amount) + " operations per phase", cs[i]["count"]);
        out.push_back(p);
    }
    return out;
}

// The largest value a number of the application may take, by its unit: a run's or a unit's seconds, one
// operation's seconds, a count or a size.
double ceiling(std::string_view unit) {
    if (unit == "seconds" || unit == "seconds per process") return max_run_s;
    if (unit.rfind("seconds", 0) == 0) return max_operation_s;
    return max_amount;
}

// Where the keys are read into an application, each named by the member it fills.
struct application_reading {
    const json& obj;
    const reader& r;
    const std::string& path;
    application& a;

    template <class T>
    bool given(T application::*member) const {
        return obj.contains(key(member).name);
    }
    template <class T>
    std::string pointer(T application::*member) const {
        return child(path, key(member).name);
    }
    // A number: a required key must be given unless `optional`; an absent one leaves the member's default.
    void number(double application::*member, bool optional = false) const {
        const application_key& k = key(member);
        a.*member = k.required && !optional ? r.number_at(obj, path, k.name, at_least(0.0, k.unit))
                                            : r.number_or(obj, path, k.name, a.*member, at_least(0.0, k.unit));
        const double most = ceiling(k.unit);
        if (a.*member > most) {
            // A value with its uncertainty ({"value": v, ...}) is named by its value.
            const json& v = obj[k.name];
            const bool wrapped = v.is_object() && v.contains("value");
            r.fail(wrapped ? child(pointer(member), "value") : pointer(member),
                   "at most " + format_double(most) + " (" + k.unit + ": what a program can take)",
                   wrapped ? v["value"] : v);
        }
    }
    template <class E>
    void choice(E application::*member, std::initializer_list<std::string_view> names) const {
        a.*member = static_cast<E>(r.choice(obj, path, key(member).name, names, 0, false));
    }

    // The program's form: its decomposition, its scaling, a wavefront sweep.
    void form() const {
        choice(&application::decomp, {to_string(decomposition::data), to_string(decomposition::task)});
        choice(&application::scale, {to_string(scaling::strong), to_string(scaling::weak)});
        // With a wavefront description the off-load profile is optional: the wavefront alone describes the work.
        a.has_wavefront = given(&application::wave);
        if (a.has_wavefront) a.wave = read_wavefront(obj[key(&application::wave).name], r, pointer(&application::wave));
    }

    // The off-load profile: N, T_hpu, T_apu, C_apu, g and how g is charged.
    void work() const {
        for (auto member : {&application::N, &application::T_hpu, &application::T_apu, &application::C_apu})
            number(member, a.has_wavefront);
        if (!a.has_wavefront && !(a.T_hpu + a.T_apu + a.C_apu > 0))  // no work: every mapping takes 0 s and none is best
            r.fail(pointer(&application::T_apu), "a program with work: T_hpu + T_apu + C_apu > 0",
                   "0 for T_hpu, T_apu and C_apu");
        if (!std::isfinite(a.T_hpu + a.T_apu + a.C_apu))
            r.fail(pointer(&application::T_apu), "T_hpu + T_apu + C_apu finite (seconds)", "a sum that overflows");
        number(&application::g, a.has_wavefront);
        choice(&application::g_charge, {"per_apu", "per_extra_apu"});
    }

    // How the program waits and starts: spin_limit, T_start, N_start, T_offload_idle.
    void waits() const {
        if (given(&application::spin_limit)) {
            const std::string_view name = key(&application::spin_limit).name;
            const json& v = obj[name];
            if (v.is_string() && v.get<std::string>() == "unbounded")
                a.spin_limit = application::spin_unbounded;
            else if (v.is_number_integer())
                a.spin_limit = r.integer_at(obj, path, name, 0, max_count);
            else
                r.fail(pointer(&application::spin_limit),
                       "an integer >= 0 (spin iterations before blocking) or \"unbounded\"", describe(v));
        }
        number(&application::T_start);
        number(&application::N_start);
        number(&application::T_offload_idle);
        number(&application::waits_per_offload);
    }

    // What the phases add: O_col, the task units, the transfers, the communication.
    void phases() const {
        if (given(&application::O_col))
            a.O_col = read_m_function(obj[key(&application::O_col).name], r, pointer(&application::O_col), m_quantity::seconds);
        const std::string_view units = key(&application::units).name;
        a.units = a.decomp == decomposition::task ? r.integer_at(obj, path, units, 1, max_count)
                                                  : r.integer_or(obj, path, units, a.units, 1, max_count);
        number(&application::dma_bytes);
        if (given(&application::comm))
            a.comm = read_communication(obj[key(&application::comm).name], r, pointer(&application::comm));
        if (given(&application::slot_time))
            a.slot_time = read_slot_curve(obj[key(&application::slot_time).name], r, pointer(&application::slot_time));
    }
};

}  // namespace

application application_from_json(const json& obj, const reader& r, const std::string& path) {
    r.object(obj, path);
    r.document(obj, path, "application");
    r.known_keys(obj, path, key_names<application_key_table>());
    application a;
    a.name = r.string_or(obj, path, "name", "");
    const application_reading reading{obj, r, path, a};
    reading.form();
    reading.work();
    reading.waits();
    reading.phases();
    a.spreads = read_spreads(obj);
    return a;
}

}  // namespace detail

}  // namespace mmgp
