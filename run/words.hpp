// run/words.hpp — the words of a run's lines: a configuration's key (the journal's trace, the replayed runs'
// index), a configuration and a time for people (words.cpp), and the time of day the journal records. Called by
// the replay, the journal, the loop and its progress lines, and by the mmgp command's outputs (cli/common.hpp);
// calls nothing of the tune's own.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "mmgp/profile.hpp"  // utc_now(), the time of day the journal records

namespace mmgp::run {

/// A time for people: "27.83 s", "412 ms", "3.1 us".
std::string human_time(double s);
/// A configuration for people: "m=4 p=4 nodes=1" (its sharing named when not dedicated).
std::string label(const configuration& c);

/// "m/p/nodes/policy": one configuration, as the journal's trace and the replayed runs name it.
inline std::string key_of(const configuration& c) {
    return fmt::format("{}/{}/{}/{}", c.m, c.p, c.nodes, to_string(c.pol));
}

/// "m=4 p=4 nodes=1 edtlp": one configuration for people, its policy named.
inline std::string config_text(const configuration& c) { return label(c) + " " + std::string(to_string(c.pol)); }

/// A tune's configurations for people: "m=4 p=4 nodes=1", with the policy only when the tune's space holds both
/// (--policy both): a policy the user never chose is not a word of the tune's lines.
class config_words {
public:
    explicit config_words(const std::vector<configuration>& space)
        : policy_(std::any_of(space.begin(), space.end(), [&](const configuration& c) { return c.pol != space.front().pol; })) {}
    std::string operator()(const configuration& c) const { return policy_ ? config_text(c) : label(c); }

private:
    bool policy_;
};

}  // namespace mmgp::run
