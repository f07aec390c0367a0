// The header of a tune's journal (run/tune_journal.hpp): its format version, its keys — the tune's options and
// the directory it ran in — how each is kept, and what a journal written before a key existed reads as. mmgp tune
// (cli/tune_header.cpp) fills the options and reads them back; the schema is the journal's.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "mmgp/error.hpp"
#include "mmgp/io.hpp"
#include "mmgp/profile.hpp"
#include "tune_journal.hpp"

namespace mmgp::run {

using nlohmann::json;

namespace {

std::string absolute_if_exists(const std::string& p) {
    std::error_code ec;
    return !p.empty() && std::filesystem::exists(p, ec) ? std::filesystem::absolute(p).string() : p;
}

}  // namespace

const std::vector<header_key>& header_keys() {
    using k = header_key::kept;
    static const std::vector<header_key> keys = {
        {"profile", k::path}, {"app", k::path}, {"replay", k::path}, {"seed"}, {"replay_first", k::added_later, "random"},
        {"model"}, {"policy"}, {"m"}, {"p"}, {"nodes"}, {"set"}, {"launcher"}, {"parallel", k::added_later, 1LL},
        {"units"}, {"cores_per_node"}, {"launcher_program"}, {"oversubscribe"}, {"no_bind"}, {"tolerance"},
        {"objective", k::added_later, "time"}, {"within", k::added_later, nullptr},
        {"max_nodes", k::added_later, nullptr}, {"confidence"}, {"bound_factor"}, {"max_runs"}, {"max_seconds"},
        {"max_cost", k::added_later, "none"},  // a journal from before the cost cap: the tune it records had none
        {"uses", k::added_later, nullptr}, {"timeout"}, {"work", k::added_later, ""},
        {"progress_regex", k::added_later, ""}, {"progress_total", k::added_later, nullptr},
        {"constants", k::added_later, json::array()},
        {"explore_platform_on_gpu", k::added_later, false},  // a journal from before that default: least known first
        {"no_prior"}, {"no_model"}, {"command"},
    };
    return keys;
}

json make_header(json options) {
    for (const header_key& k : header_keys()) {
        json& v = options[k.key];
        if (!v.is_string()) continue;
        if (k.how == header_key::kept::path) v = absolute_if_exists(v.get<std::string>());
        if (k.how == header_key::kept::added_later && v.get<std::string>().empty()) v = k.when_missing;
    }
    std::error_code ec;
    options["cwd"] = std::filesystem::current_path(ec).string();
    return {{"mmgp_tune", 1}, {"created", utc_now()}, {"options", options}};
}

json header_options(const json& header, const std::string& path) {
    const json& version = header.at("mmgp_tune");
    if (!version.is_number_integer() || version.get<long long>() != 1)
        throw input_error(path, "line 1, /mmgp_tune", "1 (the journal format this mmgp reads and writes)",
                          utf8_prefix(version.dump(), 40));
    if (!header.contains("options") || !header.at("options").is_object())
        throw input_error(path, "line 1, /options", "an object of the tune's options",
                          header.contains("options") ? utf8_prefix(header.at("options").dump(), 40) : "nothing");
    json options = header.at("options");
    // An unknown key is an error, as in a profile: a journal edited by hand or written by another program.
    const auto& keys = header_keys();
    for (auto it = options.begin(); it != options.end(); ++it) {
        if (it.key() == "cwd" ||
            std::any_of(keys.begin(), keys.end(), [&](const header_key& k) { return it.key() == k.key; }))
            continue;
        std::string known = "cwd";
        for (const header_key& k : keys) known += std::string(", ") + k.key;
        throw input_error(path, "line 1, /options/" + it.key(), "one of the keys " + known,
                          "the unknown key \"" + utf8_prefix(it.key(), 40) + "\"");
    }
    for (const header_key& k : keys)
        if (k.how == header_key::kept::added_later && !options.contains(k.key)) options[k.key] = k.when_missing;
    return options;
}

}  // namespace mmgp::run
