// Internal: scenario reading steps shared by profile.cpp and validate.cpp.
#pragma once

#include <string>
#include <vector>

#include "detail/json_reader.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::detail {

/// A JSON document with the label used for it in errors and the directory its relative paths resolve against.
struct located_json {
    json doc;
    std::string file;
    std::string base_dir;
};

/// Loads `ref` (a path, relative to base_dir or the working directory, or a bundled name of `kind`:
/// "platforms", "apps" or "scenarios"). `from_file`/`from_path` name where the reference was written.
located_json load_ref(const std::string& ref, std::string_view kind, const std::string& base_dir,
                      const std::string& from_file, const std::string& from_path);

/// JSON merge patches (RFC 7386) of a scenario's sections, applied in order to the resolved objects before
/// they are read: a validation case's own patches, then the command line's what-if edits (--set).
struct section_patches {
    std::vector<const json*> platform, application, search;
};

/// Builds a scenario from its JSON, its sections patched by `patches`.
scenario scenario_from_json(const json& doc, const std::string& file, const std::string& base_dir,
                            const section_patches& patches = {});

/// The patches of `edits` (scenario_edits: JSON objects as text, "--set" in errors), kept alive in `owned`.
section_patches edits_patches(const scenario_edits& edits, std::vector<json>& owned);

/// `base_dir` resolves the files a platform names (network tables given as OSU micro-benchmark output).
platform platform_from_json(const json& obj, const reader& r, const std::string& path, const std::string& base_dir = ".");
application application_from_json(const json& obj, const reader& r, const std::string& path);

/// Directory part of a path ("." when none).
std::string dir_of(const std::string& path);

}  // namespace mmgp::detail
