// The bundled profiles (embedded by tools/embed.cpp into bundled_profiles.cpp) and how a reference to a profile is
// resolved: a path (relative to the file that names it, then to the working directory) or a bundled name. Called
// by the readers; calls the JSON parser.
#include <filesystem>

#include "profile/profile_json.hpp"

namespace mmgp {

namespace detail {
// Defined in the generated bundled_profiles.cpp.
struct bundled_entry {
    const char* key;
    const char* text;
};
extern const bundled_entry bundled_profiles[];
extern const std::size_t bundled_profiles_count;
}  // namespace detail

std::vector<std::string> bundled_names(std::string_view kind) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < detail::bundled_profiles_count; ++i) {
        std::string_view key = detail::bundled_profiles[i].key;
        if (key.size() > kind.size() && key.substr(0, kind.size()) == kind && key[kind.size()] == '/')
            out.emplace_back(key.substr(kind.size() + 1));
    }
    return out;
}

std::string_view bundled_text(std::string_view key) noexcept {
    for (std::size_t i = 0; i < detail::bundled_profiles_count; ++i)
        if (key == detail::bundled_profiles[i].key) return detail::bundled_profiles[i].text;
    return {};
}

namespace detail {

std::string dir_of(const std::string& path) {
    auto p = std::filesystem::path(path).parent_path();
    return p.empty() ? std::string(".") : p.string();
}

namespace {

// A reference that resolves to nothing: a path is named as the user wrote it (and where it was written), a name
// with the bundled names of its kind.
[[noreturn]] void unresolved(const std::string& ref, std::string_view kind, const std::string& shown, bool looks_like_path,
                             const std::string& from_file, const std::string& from_path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (looks_like_path) {
        if (fs::exists(shown, ec)) throw input_error(shown, "", "a readable JSON file", "something that is not a regular file");
        if (from_path.empty()) throw input_error(shown, "", "a readable file", "no such file or directory");
        throw input_error(from_file, from_path, "a readable file", "no such file or directory: " + shown);
    }
    std::string names;
    for (const auto& n : bundled_names(kind)) names += (names.empty() ? "" : ", ") + n;
    throw input_error(from_path.empty() ? ref : from_file, from_path,
                      "an existing file or a bundled " + std::string(kind) + " name (" + names + ")",
                      "the string " + json(ref).dump());
}

}  // namespace

located_json load_ref(const std::string& ref, std::string_view kind, const std::string& base_dir,
                      const std::string& from_file, const std::string& from_path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    bool looks_like_path = ref.find('/') != std::string::npos || (ref.size() > 5 && ref.ends_with(".json"));
    std::vector<std::string> candidates;
    if (fs::path(ref).is_absolute()) {
        candidates.push_back(ref);
    } else {
        if (!base_dir.empty() && base_dir != ".") candidates.push_back((fs::path(base_dir) / ref).string());
        candidates.push_back(ref);
    }
    for (const auto& c : candidates) {
        if (fs::is_regular_file(c, ec)) return {parse_json(read_file(c), c), c, dir_of(c)};
    }
    if (!looks_like_path) {
        std::string key = std::string(kind) + "/" + ref;
        std::string_view text = bundled_text(key);
        if (!text.empty()) return {parse_json(text, "bundled:" + key), "bundled:" + key, "."};
    }
    unresolved(ref, kind, candidates.front(), looks_like_path, from_file, from_path);
}

}  // namespace detail

}  // namespace mmgp
