// The scenario: its key tables (a scenario's sections, the search space) and its reader, the what-if edits
// (--set) as merge patches of its sections, and the public load/parse functions of every profile type. Called by
// the commands, fit/validate.cpp and the advisor; calls the registry, the platform and application readers and
// check_coverage().
#include <algorithm>
#include <utility>

#include "mmgp/model_terms.hpp"  // parse_model: the names of the application models
#include "model/comm.hpp"        // the names of the communication models
#include "profile/profile_json.hpp"

namespace mmgp {

namespace detail {

namespace {

constexpr schema::key scenario_keys[] = {{"platform", true},  {"application", true},   {"search", false},
                                         {"model", false},     {"communication", false}};

constexpr schema::key search_keys[] = {{"m", false}, {"p", false}, {"nodes", false}, {"policy", false}, {"tolerance", false},
                                        {"sharing", false}};

int_range read_range(const json& obj, const reader& r, const std::string& path, std::string_view key, int_range dflt) {
    if (!obj.contains(key)) return dflt;
    std::string p = child(path, key);
    const json& v = obj.at(std::string(key));
    constexpr std::int64_t big = 1000000000000LL;
    if (v.is_number()) {
        std::int64_t x = r.integer(v, p, 1, big);
        return {x, x};
    }
    if (!v.is_array() || v.size() != 2) r.fail(p, "[lo, hi] with 1 <= lo <= hi, or one integer", v);
    int_range out{r.integer(v[0], child(p, 0), 1, big), r.integer(v[1], child(p, 1), 1, big)};
    if (out.lo > out.hi) r.fail(p, "[lo, hi] with lo <= hi", v);
    return out;
}

// search.sharing: some of the platform's sharing modes, each once.
std::vector<accelerator_sharing> read_searched_sharing(const json& v, const reader& r, const std::string& path,
                                                       const platform& pl) {
    const std::vector<accelerator_sharing> allowed = pl.sharing_modes();
    std::string names;
    for (accelerator_sharing a : allowed) names += (names.empty() ? "\"" : ", \"") + std::string(to_string(a)) + "\"";
    const std::string expected = "a non-empty array of the platform's sharing modes (" + names + "), each once";
    if (!v.is_array() || v.empty()) r.fail(path, expected, v);
    std::vector<accelerator_sharing> out;
    for (std::size_t i = 0; i < v.size(); ++i) {
        accelerator_sharing a{};
        if (!v[i].is_string() || !parse_sharing(v[i].get<std::string>(), a) ||
            std::find(allowed.begin(), allowed.end(), a) == allowed.end() || std::find(out.begin(), out.end(), a) != out.end())
            r.fail(child(path, i), expected, v[i]);
        out.push_back(a);
    }
    return out;
}

// The search space; by default every m, p and nodes the platform allows.
search_space read_search(const json& v, const reader& r, const std::string& path, const platform& pl) {
    search_space s;
    s.m = {1, pl.capacity()};
    s.p = {1, pl.capacity()};
    s.nodes = {1, pl.nodes};
    if (v.is_null()) return s;
    r.object(v, path);
    r.known_keys(v, path, search_keys);
    s.m = read_range(v, r, path, "m", s.m);
    s.p = read_range(v, r, path, "p", s.p);
    s.nodes = read_range(v, r, path, "nodes", s.nodes);
    s.pol = static_cast<policy>(r.choice(v, path, "policy", {to_string(policy::edtlp), to_string(policy::os)}, 0, false));
    s.tolerance = r.number_or(v, path, "tolerance", 0.05, at_least(0.0, "fraction of the best time"));
    if (s.tolerance > 1)  // as --tolerance: a fraction (5 would be 500 %, not 5 %)
        r.fail(child(path, "tolerance"), "a fraction of the best time in [0, 1]", v["tolerance"]);
    if (v.contains("sharing")) s.sharing = read_searched_sharing(v["sharing"], r, child(path, "sharing"), pl);
    return s;
}

json patched(json obj, const std::vector<const json*>& patches) {
    for (const json* p : patches) obj.merge_patch(*p);
    return obj;
}

// A platform or application section of a scenario: an object, or a path or bundled name of `kind`, read by `parse`
// after `patches`.
template <class Parse>
auto read_section(const json& doc, const reader& r, const std::string& base_dir, const char* key, const char* kind,
                  const std::vector<const json*>& patches, std::vector<std::string>& sources, Parse&& parse) {
    const std::string path = std::string("/") + key;
    if (!doc.contains(key))
        r.fail(path, std::string("an object or the name of a bundled ") + kind + " profile", "nothing (the key is missing)");
    const json& v = doc[key];
    if (v.is_string()) {
        located_json lj = load_ref(v.get<std::string>(), kind, base_dir, r.file, path);
        sources.push_back(lj.file);
        const reader rr{patches.empty() ? lj.file : r.file + " (patched " + lj.file + ")"};
        return parse(patched(std::move(lj.doc), patches), rr, std::string(""), lj.base_dir);
    }
    if (!v.is_object()) r.fail(path, std::string("an object or the name of a bundled ") + kind + " profile", v);
    if (!patches.empty()) return parse(patched(v, patches), reader{r.file + " (patched)"}, path, base_dir);
    return parse(v, r, path, base_dir);
}

}  // namespace

scenario scenario_from_json(const json& doc, const std::string& file, const std::string& base_dir,
                            const section_patches& patches, bool cover_search) {
    reader r{file};
    r.object(doc, "");
    r.document(doc, "", "scenario");  // first: a platform profile given as a scenario says so
    r.known_keys(doc, "", scenario_keys);
    scenario s;
    s.file = file;
    if (!file.empty()) s.sources.push_back(file);
    s.name = r.string_or(doc, "", "name", "");
    if (doc.contains("model")) {
        model_kind named;
        const json& m = doc["model"];
        if (!m.is_string() || !parse_model(m.get<std::string>(), named))
            r.fail("/model", "an application model by name: eq11 or mmgp (mmgp models)", m);
        s.model = m.get<std::string>();
    }
    if (doc.contains("communication")) {
        const json& c = doc["communication"];
        if (!c.is_string() || (c.get<std::string>() != detail::table_model_name &&
                               c.get<std::string>() != detail::latency_bandwidth_model_name))
            r.fail("/communication", "a communication model by name: table or latency-bandwidth (mmgp models)", c);
        s.communication = c.get<std::string>();
    }
    s.plat = read_section(doc, r, base_dir, "platform", "platforms", patches.platform, s.sources,
                          [](const json& o, const reader& rr, const std::string& p, const std::string& dir) {
                              return platform_from_json(o, rr, p, dir);
                          });
    s.app = read_section(doc, r, base_dir, "application", "apps", patches.application, s.sources,
                         [](const json& o, const reader& rr, const std::string& p, const std::string&) {
                             return application_from_json(o, rr, p);
                         });
    json search = doc.contains("search") ? doc["search"] : json();
    if (!patches.search.empty()) {
        if (search.is_null()) search = json::object();
        if (search.is_object()) search = patched(std::move(search), patches.search);
    }
    s.space = read_search(search, r, "/search", s.plat);
    if (cover_search) check_coverage(s);
    return s;
}

section_patches edits_patches(const scenario_edits& edits, std::vector<json>& owned) {
    owned.clear();
    owned.reserve(3);
    section_patches out;
    auto add = [&](const std::string& text, std::vector<const json*>& to) {
        if (text.empty()) return;
        owned.push_back(parse_json(text, "--set"));
        if (!owned.back().is_object()) throw input_error("--set", "", "an object of edits", describe(owned.back()));
        to.push_back(&owned.back());
    };
    add(edits.platform, out.platform);
    add(edits.application, out.application);
    add(edits.search, out.search);
    return out;
}

}  // namespace detail

scenario parse_scenario(std::string_view json_text, const std::string& file, const std::string& base_dir) {
    return detail::scenario_from_json(detail::parse_json(json_text, file), file, base_dir);
}

scenario load_scenario(const std::string& path_or_name) { return load_scenario(path_or_name, scenario_edits{}); }

scenario load_scenario(const std::string& path_or_name, const scenario_edits& edits) {
    std::vector<detail::json> owned;
    const detail::section_patches patches = detail::edits_patches(edits, owned);
    detail::located_json lj = detail::load_ref(path_or_name, "scenarios", ".", path_or_name, "");
    return detail::scenario_from_json(lj.doc, lj.file, lj.base_dir, patches);
}

platform load_platform(const std::string& path_or_name, const std::string& edit) {
    detail::located_json lj = detail::load_ref(path_or_name, "platforms", ".", path_or_name, "");
    if (edit.empty()) return detail::platform_from_json(lj.doc, detail::reader{lj.file}, "", lj.base_dir);
    std::vector<detail::json> owned;
    const detail::section_patches patches = detail::edits_patches(scenario_edits{edit, "", ""}, owned);
    lj.doc.merge_patch(*patches.platform.front());
    return detail::platform_from_json(lj.doc, detail::reader{lj.file + " (patched)"}, "", lj.base_dir);
}

platform load_platform(const std::string& path_or_name) { return load_platform(path_or_name, ""); }

platform parse_platform(std::string_view json_text, const std::string& file) {
    return detail::platform_from_json(detail::parse_json(json_text, file), detail::reader{file}, "", detail::dir_of(file));
}

application load_application(const std::string& path_or_name) {
    detail::located_json lj = detail::load_ref(path_or_name, "apps", ".", path_or_name, "");
    return detail::application_from_json(lj.doc, detail::reader{lj.file}, "");
}

application parse_application(std::string_view json_text, const std::string& file) {
    return detail::application_from_json(detail::parse_json(json_text, file), detail::reader{file}, "");
}

}  // namespace mmgp
