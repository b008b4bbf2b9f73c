// Fuzzes how an s3:// URL becomes a request (reader/src/fetch/remote/s3_config.h): the AWS INI files, the
// environment and the URL. Input: five parts separated by NUL bytes: the URL, the addressing style,
// environment lines (NAME=VALUE), the credentials file and the config file. The two files are written to a
// scratch folder and named by AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE; HOME is never set, so the
// harness reads nothing of the machine's own.
// Besides the sanitizers' checks, it asserts: INI keys are lower case and trimmed; a key's encoding is
// URL-safe and decodes back; a resolved target is an http(s) URL with a region name and no line break in
// a credential; a refusal is std::invalid_argument and never shows the secret key.

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fetch/remote/s3_config.h"
#include "scratch_dir.h"

namespace {

constexpr std::string_view kSecret = "Zq9-secret-marker";

void require(bool ok) {
  if (!ok) std::abort();
}

const std::string& work_dir() {
  static const gdfs::fuzz::ScratchDir dir("gdfs-fuzz-s3");
  return dir.path();
}

void write_file(const std::string& path, std::string_view text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
    std::abort();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void check_ini(const gdfs::remote::IniFile& ini) {
  for (const auto& [section, keys] : ini)
    for (const auto& [key, value] : keys) {
      require(!key.empty() || !value.empty());
      for (char c : key) require(!std::isupper(static_cast<unsigned char>(c)) && c != '\n');
      require(value.find('\n') == std::string::npos);
      for (std::string_view s : {std::string_view(key), std::string_view(value)})
        if (!s.empty())
          require(!std::isspace(static_cast<unsigned char>(s.front())) &&
                  !std::isspace(static_cast<unsigned char>(s.back())));
    }
}

void check_key_encoding(std::string_view key) {
  const std::string enc = gdfs::remote::encode_s3_key(key);
  std::string back;
  for (size_t i = 0; i < enc.size(); ++i) {
    const char c = enc[i];
    if (c == '%') {
      require(i + 2 < enc.size());
      const int hi = hex_value(enc[i + 1]), lo = hex_value(enc[i + 2]);
      require(hi >= 0 && lo >= 0);
      back.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
      continue;
    }
    require(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '~' ||
            c == '/');
    back.push_back(c);
  }
  require(back == key);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gdfs::remote;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> part;  // the last part takes the rest, NULs included
  size_t pos = 0;
  for (size_t nul; part.size() < 4 && (nul = input.find('\0', pos)) != std::string_view::npos; pos = nul + 1)
    part.push_back(input.substr(pos, nul - pos));
  part.push_back(input.substr(pos));
  part.resize(5);

  const IniFile creds = parse_ini(part[3]);
  const IniFile config = parse_ini(part[4]);
  check_ini(creds);
  check_ini(config);
  if (part[0].starts_with("s3://")) check_key_encoding(part[0].substr(5));

  std::map<std::string, std::string> env;
  for (pos = 0; pos < part[2].size();) {
    const size_t nl = part[2].find('\n', pos);
    const std::string_view line =
        part[2].substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? part[2].size() : nl + 1;
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  env.erase("HOME");
  env["AWS_SHARED_CREDENTIALS_FILE"] = work_dir() + "/credentials";
  env["AWS_CONFIG_FILE"] = work_dir() + "/config";
  if (env.count("AWS_SECRET_ACCESS_KEY")) env["AWS_SECRET_ACCESS_KEY"] = std::string(kSecret);
  write_file(env["AWS_SHARED_CREDENTIALS_FILE"], part[3]);
  write_file(env["AWS_CONFIG_FILE"], part[4]);
  const EnvLookup lookup = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };

  try {
    const S3Target t = resolve_s3(part[0], part[1], lookup);
    require(t.url.starts_with("http://") || t.url.starts_with("https://"));
    require(!t.region.empty());
    for (char c : t.region) require(std::isalnum(static_cast<unsigned char>(c)) || c == '-');
    require(t.access_key.empty() == t.secret_key.empty());
    for (const std::string* s : {&t.access_key, &t.secret_key, &t.session_token})
      require(s->find_first_of("\r\n") == std::string::npos);
  } catch (const std::invalid_argument& e) {
    if (input.find(kSecret) == std::string_view::npos)
      require(std::string_view(e.what()).find(kSecret) == std::string_view::npos);
  }
  return 0;
}
