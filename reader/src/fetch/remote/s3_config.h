// Where an s3://bucket/key object is and how to sign for it, from the places AWS tools look: the
// environment (AWS_ENDPOINT_URL[_S3], AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE, AWS_S3_ADDRESSING_STYLE) and the shared files
// (~/.aws/credentials and ~/.aws/config, or AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE).
// Pure functions over an environment lookup, so the tests can feed them anything.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace gdfs::remote {

struct S3Target {
  std::string url;                                    // the object's http(s) URL, key percent-encoded
  std::string region;                                 // for the signature scope
  std::string access_key, secret_key, session_token;  // empty access_key: unsigned (public bucket)
  bool path_style = false;
  std::string where;  // "s3://bucket/key" for messages
};

// An environment variable's value, or nullptr (std::getenv in the product).
using EnvLookup = std::function<const char*(const char*)>;

// `addressing`: "path", "virtual" or "" (the environment or config decide; else path-style with an
// endpoint or a dotted bucket, virtual-host style otherwise). Throws std::invalid_argument with a
// message that names no secret.
S3Target resolve_s3(std::string_view s3_url, std::string_view addressing, const EnvLookup& env);

// One INI file as AWS writes them: "[section]" headers, "key = value" lines, '#' or ';' comments, and
// nested blocks ("s3 =" followed by indented "key = value" lines, stored as "s3.key"). Keys are lower
// case. A missing or unreadable file is empty.
using IniFile = std::map<std::string, std::map<std::string, std::string>>;
IniFile parse_ini(std::string_view text);
IniFile read_ini(const std::string& path);

// Percent-encodes an S3 key for the request path: every byte but A-Z a-z 0-9 - _ . ~ and '/'.
std::string encode_s3_key(std::string_view key);

}  // namespace gdfs::remote
