// mmgp/words.hpp — a configuration and a time for people, and a configuration's key: the words of every output
// (mmgp's reports, a tune's progress lines and result, the journal's trace and the replayed runs' index).
//
//   mmgp::human_time(0.412);          // "412 ms"
//   mmgp::label({4, 4, 1});           // "m=4 p=4 nodes=1"
#pragma once

#include "mmgp/export.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "mmgp/profile.hpp"

MMGP_API_BEGIN
namespace mmgp {

/// A time for people: "27.83 s", "412 ms", "3.1 us".
std::string human_time(double s);
/// A configuration for people: "m=4 p=4 nodes=1" (its sharing named when not dedicated).
std::string label(const configuration& c);
/// "m/p/nodes/policy": one configuration, as the journal's trace and the replayed runs name it.
std::string key_of(const configuration& c);

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

}  // namespace mmgp
MMGP_API_END
