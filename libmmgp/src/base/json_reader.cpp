// Validated JSON reading: parsing (a key given twice refused), whole files, and the reader's typed accessors,
// whose errors name the file, the JSON pointer, what was expected and what was found. Every reader calls it; it
// calls nothing of the library but the error types. It also defines the text checks mmgp/io.hpp declares for
// every reader of files (read_text_file, check_unique_keys, utf8_prefix, invalid_utf8_at).
#include "base/json_reader.hpp"
#include "mmgp/io.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mmgp {

namespace {
// The text with every byte that is not part of valid UTF-8 written as \xNN: a message quoting a file's bytes (a
// CSV header, a field, a file name) stays valid UTF-8 on a terminal and in a JSON document.
// A message's text as one printable line: bytes that are not UTF-8, and control characters (a NUL would end the
// message where it stands, a newline would make it two lines), written as \xNN (\n, \r, \t as such).
std::string valid_utf8(std::string text) {
    for (std::size_t at = invalid_utf8_at(text); at < text.size(); at = invalid_utf8_at(text)) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned char>(text[at]));
        text.replace(at, 1, hex);
    }
    for (std::size_t at = 0; at < text.size(); ++at) {
        const auto c = static_cast<unsigned char>(text[at]);
        if (c >= 0x20 && c != 0x7F) continue;
        char hex[8];
        if (c == '\n' || c == '\r' || c == '\t') std::snprintf(hex, sizeof hex, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        else std::snprintf(hex, sizeof hex, "\\x%02X", c);
        text.replace(at, 1, hex);
        at += std::strlen(hex) - 1;
    }
    return text;
}
}  // namespace

input_error::input_error(std::string file, std::string location, std::string expected, std::string found)
    : error(valid_utf8(file + ": " + (location.empty() ? std::string("(document)") : location) + ": expected " + expected +
                       ", found " + found)),
      file_(valid_utf8(std::move(file))),
      location_(valid_utf8(std::move(location))),
      expected_(valid_utf8(std::move(expected))),
      found_(valid_utf8(std::move(found))) {}

}  // namespace mmgp

namespace mmgp::detail {

std::string format_double(double v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string describe(const json& j) {
    switch (j.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "the number " + j.dump();
        case json::value_t::number_float: return "the number " + format_double(j.get<double>());
        case json::value_t::string: {
            std::string s = j.get<std::string>();
            if (s.size() > 60) s = utf8_prefix(s, 57) + "...";
            return "the string " + json(s).dump();
        }
        case json::value_t::array: return "an array of " + std::to_string(j.size());
        case json::value_t::object: return "an object";
        default: return "a value of another type";
    }
}

std::string child(const std::string& path, std::string_view key) {
    std::string out = path;
    out += '/';
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

std::string child(const std::string& path, std::size_t index) { return path + "/" + std::to_string(index); }

namespace {

// Reads one document as a stream of events (the JSON library's SAX interface, linear in its size) and refuses a
// key given twice in one object: the library's own parse would keep the last value without a word, and a user
// who wrote "T_apu": -5 and later "T_apu": 370 needs to hear of it. A syntax error ends it quietly: the parse
// that follows reports it. (The library's parse callback would do the same in one pass, but it is quadratic in
// the size of an array: a 14 MB runs file took minutes.)
class unique_keys : public nlohmann::json_sax<json> {
public:
    unique_keys(std::string file, std::string prefix) : file_(std::move(file)), prefix_(std::move(prefix)) {}
    bool null() override { return value(json(nullptr)); }
    bool boolean(bool v) override { return value(json(v)); }
    bool number_integer(number_integer_t v) override { return value(json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return value(json(v)); }
    bool number_float(number_float_t v, const string_t&) override { return value(json(v)); }
    bool string(string_t& v) override { return value(json(v)); }
    bool binary(binary_t&) override { return value(json::binary({})); }
    bool start_object(std::size_t) override { return open(false); }
    bool start_array(std::size_t) override { return open(true); }
    bool key(string_t& k) override {
        frame& f = frames_.back();
        f.key = k;
        const auto it = f.seen.find(f.key);
        f.duplicate = it != f.seen.end();
        if (f.duplicate) f.first = it->second;
        return true;
    }
    bool end_object() override { return close("an object"); }
    bool end_array() override { return close("an array of " + std::to_string(frames_.back().index)); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

private:
    struct frame {
        bool array;
        std::size_t index;  // elements so far (arrays)
        std::string key;
        std::map<std::string, std::string> seen;  // key -> how its value is named
        std::string first;                        // the first value of a key given twice
        bool duplicate;
        std::string path;
    };
    bool open(bool array) {
        std::string path;
        if (!frames_.empty()) path = frames_.back().array ? child(frames_.back().path, frames_.back().index)
                                                          : child(frames_.back().path, frames_.back().key);
        frames_.push_back({array, 0, {}, {}, {}, false, std::move(path)});
        return true;
    }
    bool close(const std::string& named) {
        frames_.pop_back();
        return finish_child(named);
    }
    bool value(const json& v) { return finish_child(describe(v)); }
    bool finish_child(const std::string& named) {
        if (frames_.empty()) return true;  // the document itself
        frame& f = frames_.back();
        if (f.array) {
            ++f.index;
            return true;
        }
        if (f.duplicate)
            throw input_error(file_, prefix_ + child(f.path, f.key), "one value per key (the last would silently win)",
                              "two: " + f.first + " and " + named);
        f.seen.emplace(f.key, named);
        return true;
    }
    std::string file_, prefix_;  // copies: a caller may pass temporaries
    std::vector<frame> frames_;
};

}  // namespace

json parse_json(std::string_view text, const std::string& file) {
    try {
        refuse_duplicate_keys(text, file, "");
        return json::parse(text.begin(), text.end());
    } catch (const json::exception& e) {
        // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 2: ..." or
        // "[json.exception.out_of_range.406] number overflow parsing '1e999'".
        std::string msg = e.what();
        auto pos = msg.find("] ");
        if (pos != std::string::npos) msg = msg.substr(pos + 2);
        for (char& c : msg)
            if (c == '\n' || c == '\r') c = ' ';
        throw input_error(file, "", "a JSON document", msg);
    }
}

namespace {

// The deepest nesting of arrays and objects in `text`, outside strings: one linear pass, no allocation.
std::size_t nesting_depth(std::string_view text) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

}  // namespace

void refuse_duplicate_keys(std::string_view text, const std::string& file, const std::string& location_prefix) {
    if (const std::size_t depth = nesting_depth(text); depth > max_json_depth) {
        std::string where = location_prefix;  // "line 3, " -> "line 3"
        while (!where.empty() && (where.back() == ' ' || where.back() == ',')) where.pop_back();
        throw input_error(file, where, "JSON nested at most " + std::to_string(max_json_depth) + " levels deep",
                          std::to_string(depth) + " levels");
    }
    unique_keys keys(file, location_prefix);
    try {
        json::sax_parse(text.begin(), text.end(), &keys);
    } catch (const json::exception&) {  // not JSON: the caller's own parse says so
    }
}

std::string read_file(const std::string& path) {
    // One way to read every input: a regular file or a stream (a FIFO, a device, /dev/stdin) alike, to its end,
    // at most max_input_bytes. Opened without blocking, so that a file whose read never ends (/proc/kmsg) is
    // refused instead of waited on; but a FIFO waits for its writer (opened without blocking, it would read as
    // empty before the writer comes).
    struct stat st {};
    const bool known = ::stat(path.c_str(), &st) == 0;
    if (known && S_ISDIR(st.st_mode)) throw input_error(path, "", "a readable file", "a directory");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (known && S_ISFIFO(st.st_mode) ? 0 : O_NONBLOCK));
    if (fd < 0) throw input_error(path, "", "a readable file", std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw input_error(path, "", "a file that can be read to its end",
                              err == EAGAIN ? "one that has nothing to read yet (it would block)" : std::strerror(err));
        }
        if (n == 0) break;
        if (text.size() + static_cast<std::size_t>(n) > max_input_bytes) {
            ::close(fd);
            throw input_error(path, "", "at most " + std::to_string(max_input_bytes >> 20) + " MiB",
                              "more (a file of runs, a profile or a journal is far smaller: is it the right file?)");
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    // Every text input (JSON, CSV) may start with the UTF-8 byte-order mark that spreadsheets write.
    if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    return text;
}

void reader::document(const json& obj, const std::string& path, std::string_view kind) const {
    if (obj.contains("schema")) {
        const json& sc = obj["schema"];
        if (!sc.is_string() || sc.get<std::string>() != "mmgp/1") fail(child(path, "schema"), "\"mmgp/1\"", sc);
    }
    if (obj.contains("kind")) {
        const json& k = obj["kind"];
        if (!k.is_string() || k.get<std::string>() != kind) fail(child(path, "kind"), "\"" + std::string(kind) + "\"", k);
    }
}

void reader::fail(const std::string& path, const std::string& expected, const std::string& found) const {
    throw input_error(file, path, expected, found);
}

const json& reader::object(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "an object", j);
    return j;
}

namespace {
bool provenance_key(std::string_view k) {
    static constexpr std::string_view allowed[] = {"source", "sources", "note", "notes", "provenance",
                                                    "measurements", "machine", "description", "calibration",
                                                    "schema", "kind", "name", "assumptions", "statistics"};
    if (!k.empty() && k[0] == '_') return true;
    for (auto a : allowed)
        if (a == k) return true;
    return false;
}
}  // namespace

namespace {
template <class Keys, class Name>
void check_known(const reader& r, const json& obj, const std::string& path, const Keys& known, Name name) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const std::string& k = it.key();
        bool ok = provenance_key(k);
        for (const auto& kk : known) ok = ok || name(kk) == k;
        if (!ok) {
            std::string list;
            for (const auto& kk : known) {
                if (!list.empty()) list += ", ";
                list += name(kk);
            }
            r.fail(child(path, k), "one of the keys " + list, "the unknown key " + json(k).dump());
        }
    }
}
}  // namespace

void reader::known_keys(const json& obj, const std::string& path, std::span<const schema::key> known) const {
    check_known(*this, obj, path, known, [](const schema::key& k) { return k.name; });
}

void reader::known_keys(const json& obj, const std::string& path,
                        std::initializer_list<std::string_view> known) const {
    check_known(*this, obj, path, known, [](std::string_view k) { return k; });
}

void reader::known_keys(const json& obj, const std::string& path, std::span<const std::string_view> known) const {
    check_known(*this, obj, path, known, [](std::string_view k) { return k; });
}

double reader::number(const json& v0, const std::string& path0, number_range range) const {
    const auto [lo, strict, what] = range;
    const json* v = &v0;
    std::string path = path0;
    if (v->is_object()) {
        if (!v->contains("value")) fail(path, std::string("a number (") + what + ") or {\"value\": number}", *v);
        known_keys(*v, path, {"value", "unit", "median", "spread", "mad", "std_error", "cv", "repetitions", "harness",
                              "min", "ci95", "flagged", "warning"});
        // A spread is what --uncertainty varies the value by: a number, not negative (a wrong one is refused,
        // not passed over).
        for (const char* key : {"spread", "mad", "std_error"})
            if (v->contains(key) && (!(*v)[key].is_number() || !std::isfinite((*v)[key].get<double>()) ||
                                     (*v)[key].get<double>() < 0))
                fail(child(path, key), "a finite number >= 0 (the spread of the value)", (*v)[key]);
        path = child(path, "value");
        v = &(*v)["value"];
    }
    std::string expect = std::string(strict ? "a finite number > " : "a finite number >= ") + format_double(lo) +
                         " (" + what + ")";
    if (!v->is_number()) fail(path, expect, *v);
    double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || (strict && d == lo)) fail(path, expect, *v);
    return d;
}

double reader::number_at(const json& obj, const std::string& path, std::string_view key, number_range range) const {
    if (!obj.contains(key))
        fail(child(path, key), std::string(range.strict ? "a finite number > " : "a finite number >= ") +
                                   format_double(range.lo) + " (" + range.what + ")",
             "nothing (the key is missing)");
    return number(obj.at(std::string(key)), child(path, key), range);
}

double reader::number_or(const json& obj, const std::string& path, std::string_view key, double dflt,
                         number_range range) const {
    if (!obj.contains(key)) return dflt;
    return number(obj.at(std::string(key)), child(path, key), range);
}

std::int64_t reader::integer(const json& v0, const std::string& path0, std::int64_t lo, std::int64_t hi) const {
    const json& v = v0.is_object() && v0.contains("value") ? v0["value"] : v0;
    const std::string path = &v == &v0 ? path0 : child(path0, "value");
    if (&v != &v0) known_keys(v0, path0, {"value"});
    std::string expect = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (v.is_number_integer()) {
        if (v.is_number_unsigned()) {
            auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(hi) || static_cast<std::int64_t>(u) < lo) fail(path, expect, v);
            return static_cast<std::int64_t>(u);
        }
        auto i = v.get<std::int64_t>();
        if (i < lo || i > hi) fail(path, expect, v);
        return i;
    }
    if (v.is_number_float()) {
        double d = v.get<double>();
        if (std::isfinite(d) && std::floor(d) == d && d >= static_cast<double>(lo) && d <= static_cast<double>(hi))
            return static_cast<std::int64_t>(d);
    }
    fail(path, expect, v);
}

std::int64_t reader::integer_at(const json& obj, const std::string& path, std::string_view key, std::int64_t lo,
                                std::int64_t hi) const {
    if (!obj.contains(key))
        fail(child(path, key), "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
             "nothing (the key is missing)");
    return integer(obj.at(std::string(key)), child(path, key), lo, hi);
}

std::int64_t reader::integer_or(const json& obj, const std::string& path, std::string_view key, std::int64_t dflt,
                                std::int64_t lo, std::int64_t hi) const {
    if (!obj.contains(key)) return dflt;
    return integer(obj.at(std::string(key)), child(path, key), lo, hi);
}

std::string reader::string_at(const json& obj, const std::string& path, std::string_view key) const {
    if (!obj.contains(key)) fail(child(path, key), "a string", "nothing (the key is missing)");
    const json& v = obj.at(std::string(key));
    if (!v.is_string()) fail(child(path, key), "a string", v);
    return v.get<std::string>();
}

std::string reader::string_or(const json& obj, const std::string& path, std::string_view key,
                              std::string dflt) const {
    if (!obj.contains(key)) return dflt;
    const json& v = obj.at(std::string(key));
    if (!v.is_string()) fail(child(path, key), "a string", v);
    return v.get<std::string>();
}

std::size_t reader::choice(const json& obj, const std::string& path, std::string_view key,
                           std::span<const std::string_view> choices, std::size_t dflt, bool required) const {
    std::string list;
    for (auto c : choices) {
        if (!list.empty()) list += " or ";
        list += '"';
        list += c;
        list += '"';
    }
    if (!obj.contains(key)) {
        if (required) fail(child(path, key), list, "nothing (the key is missing)");
        return dflt;
    }
    const json& v = obj.at(std::string(key));
    if (v.is_string()) {
        std::size_t i = 0;
        for (auto c : choices) {
            if (c == v.get<std::string>()) return i;
            ++i;
        }
    }
    fail(child(path, key), list, v);
}

}  // namespace mmgp::detail

namespace mmgp {

std::string read_text_file(const std::string& path) { return detail::read_file(path); }

void check_unique_keys(std::string_view text, const std::string& file, const std::string& location_prefix) {
    detail::refuse_duplicate_keys(text, file, location_prefix);
}

std::string utf8_prefix(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return std::string(text);
    std::size_t n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;  // back to a character's first byte
    return std::string(text.substr(0, n));
}

std::size_t invalid_utf8_at(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                : (c & 0xF8) == 0xF0 && c <= 0xF4                ? 4
                                                                                 : 0;
        if (len == 0 || i + len > text.size()) return i;
        for (std::size_t k = 1; k < len; ++k)
            if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return i;
        if (len == 3) {  // no overlong forms, no surrogates
            const auto c1 = static_cast<unsigned char>(text[i + 1]);
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return i;
        }
        if (len == 4) {
            const auto c1 = static_cast<unsigned char>(text[i + 1]);
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return i;
        }
        i += len;
    }
    return text.size();
}

}  // namespace mmgp
