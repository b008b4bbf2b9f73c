#include "fetch/remote/s3_config.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gdfs::remote {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A bucket name that can be a DNS label sequence: lower case letters, digits, '-' and '.', 3..63.
bool dns_compatible(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (char c : bucket)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '-' || c == '.'))
      return false;
  return true;
}

// Any bucket name S3 has ever allowed (legacy us-east-1 names included), and nothing that could change
// the shape of a URL.
bool plausible_bucket(std::string_view bucket) {
  if (bucket.empty() || bucket.size() > 255) return false;
  for (char c : bucket)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  return true;
}

struct Endpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // host[:port]
  std::string prefix;  // path before the bucket or key, without a trailing '/'
};

Endpoint parse_endpoint(std::string_view url, const char* from) {
  Endpoint e;
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) throw std::invalid_argument(std::string(from) + ": not an http(s) URL");
  e.scheme = lower(url.substr(0, sep));
  if (e.scheme != "http" && e.scheme != "https")
    throw std::invalid_argument(std::string(from) + ": not an http(s) URL");
  std::string_view rest = url.substr(sep + 3);
  const size_t slash = rest.find('/');
  e.host = std::string(rest.substr(0, slash));
  if (e.host.find('@') != std::string::npos)
    throw std::invalid_argument(std::string(from) + ": credentials in an endpoint URL are not supported");
  if (e.host.empty() || e.host.find_first_of("?#") != std::string::npos)
    throw std::invalid_argument(std::string(from) + ": no host");
  std::string_view prefix = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  e.prefix = std::string(prefix);
  return e;
}

std::string get(const IniFile& ini, const std::string& section, const std::string& key) {
  auto s = ini.find(section);
  if (s == ini.end()) return "";
  auto k = s->second.find(key);
  return k == s->second.end() ? "" : k->second;
}

}  // namespace

IniFile parse_ini(std::string_view text) {
  IniFile ini;
  std::string section, nested;
  bool have_section = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const bool indented = !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
    std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      const size_t close = line.find(']');
      if (close == std::string_view::npos) continue;
      section = std::string(trim(line.substr(1, close - 1)));
      have_section = true;
      nested.clear();
      ini[section];
      continue;
    }
    const size_t eq = line.find('=');
    if (!have_section || eq == std::string_view::npos) continue;
    const std::string key = lower(trim(line.substr(0, eq)));
    const std::string value(trim(line.substr(eq + 1)));
    if (indented && !nested.empty()) {
      ini[section][nested + "." + key] = value;
      continue;
    }
    nested = value.empty() ? key : "";  // "s3 =" opens a nested block
    if (!value.empty()) ini[section][key] = value;
  }
  return ini;
}

IniFile read_ini(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return parse_ini(s.str());
}

std::string encode_s3_key(std::string_view key) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

S3Target resolve_s3(std::string_view s3_url, std::string_view addressing, const EnvLookup& env) {
  auto var = [&](const char* name) -> std::string {
    const char* v = env(name);
    return v ? std::string(v) : std::string();
  };
  if (!s3_url.starts_with("s3://")) throw std::invalid_argument("not an s3:// URL");
  std::string_view rest = s3_url.substr(5);
  const size_t slash = rest.find('/');
  const std::string bucket(rest.substr(0, slash));
  const std::string key(slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1));
  S3Target t;
  t.where = "s3://" + bucket + "/" + key;
  if (!plausible_bucket(bucket)) throw std::invalid_argument(t.where + ": not a valid bucket name");
  if (key.empty()) throw std::invalid_argument(t.where + ": no object key (s3://BUCKET/KEY)");

  // The profile and the shared files.
  std::string profile = var("AWS_PROFILE");
  const bool profile_named = !profile.empty();
  if (profile.empty()) profile = "default";
  const std::string home = var("HOME");
  std::string config_path = var("AWS_CONFIG_FILE"), creds_path = var("AWS_SHARED_CREDENTIALS_FILE");
  if (config_path.empty() && !home.empty()) config_path = home + "/.aws/config";
  if (creds_path.empty() && !home.empty()) creds_path = home + "/.aws/credentials";
  const IniFile config = config_path.empty() ? IniFile{} : read_ini(config_path);
  const IniFile creds = creds_path.empty() ? IniFile{} : read_ini(creds_path);
  std::string conf_section = profile == "default" ? "default" : "profile " + profile;
  if (!config.count(conf_section) && config.count("profile " + profile)) conf_section = "profile " + profile;
  if (!config.count(conf_section) && config.count(profile)) conf_section = profile;
  if (profile_named && !config.count(conf_section) && !creds.count(profile))
    throw std::invalid_argument(t.where + ": AWS profile '" + profile + "' is in neither " + config_path +
                                " nor " + creds_path);
  auto conf = [&](const std::string& k) { return get(config, conf_section, k); };

  // Region.
  t.region = var("AWS_REGION");
  if (t.region.empty()) t.region = var("AWS_DEFAULT_REGION");
  if (t.region.empty()) t.region = conf("region");
  if (t.region.empty()) t.region = "us-east-1";
  for (char c : t.region)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-'))
      throw std::invalid_argument(t.where + ": region '" + t.region + "' is not a region name");

  // Endpoint: the service-specific settings first, as the AWS tools do.
  std::string endpoint = var("AWS_ENDPOINT_URL_S3");
  const char* endpoint_from = "AWS_ENDPOINT_URL_S3";
  if (endpoint.empty()) endpoint = var("AWS_ENDPOINT_URL"), endpoint_from = "AWS_ENDPOINT_URL";
  if (endpoint.empty()) {
    const std::string services = conf("services");
    if (!services.empty()) endpoint = get(config, "services " + services, "s3.endpoint_url");
    if (endpoint.empty()) endpoint = conf("s3.endpoint_url");
    if (endpoint.empty()) endpoint = conf("endpoint_url");
    endpoint_from = "endpoint_url in the AWS config";
  }
  const bool custom_endpoint = !endpoint.empty();
  const std::string aws_domain = t.region.starts_with("cn-") ? "amazonaws.com.cn" : "amazonaws.com";
  const Endpoint ep = custom_endpoint ? parse_endpoint(endpoint, endpoint_from)
                                      : Endpoint{"https", "s3." + t.region + "." + aws_domain, ""};

  // Addressing style.
  std::string style(addressing);
  if (style.empty()) style = lower(var("AWS_S3_ADDRESSING_STYLE"));
  if (style.empty()) style = lower(conf("s3.addressing_style"));
  if (style.empty() || style == "auto") {
    t.path_style = custom_endpoint || bucket.find('.') != std::string::npos || !dns_compatible(bucket);
  } else if (style == "path") {
    t.path_style = true;
  } else if (style == "virtual") {
    if (!dns_compatible(bucket))
      throw std::invalid_argument(t.where + ": bucket name cannot be a host name (virtual-host addressing)");
    t.path_style = false;
  } else {
    throw std::invalid_argument("S3 addressing style '" + style + "': use path, virtual or auto");
  }
  const std::string path = "/" + encode_s3_key(key);
  t.url = t.path_style ? ep.scheme + "://" + ep.host + ep.prefix + "/" + bucket + path
                       : ep.scheme + "://" + bucket + "." + ep.host + ep.prefix + path;

  // Credentials: the environment, else the profile in the credentials file, else in the config file.
  t.access_key = var("AWS_ACCESS_KEY_ID");
  t.secret_key = var("AWS_SECRET_ACCESS_KEY");
  t.session_token = var("AWS_SESSION_TOKEN");
  if (t.access_key.empty() || t.secret_key.empty()) {
    t.access_key = get(creds, profile, "aws_access_key_id");
    t.secret_key = get(creds, profile, "aws_secret_access_key");
    t.session_token = get(creds, profile, "aws_session_token");
  }
  if (t.access_key.empty() || t.secret_key.empty()) {
    t.access_key = conf("aws_access_key_id");
    t.secret_key = conf("aws_secret_access_key");
    t.session_token = conf("aws_session_token");
  }
  if (t.access_key.empty() || t.secret_key.empty()) {
    t.access_key.clear();
    t.secret_key.clear();
    t.session_token.clear();
    for (const char* k :
         {"role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"})
      if (!conf(k).empty())
        throw std::invalid_argument(t.where + ": AWS profile '" + profile +
                                    "' gets its credentials through " + k +
                                    ", which gdfs does not support; set AWS_ACCESS_KEY_ID, " +
                                    "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) instead");
  }
  for (const std::string* s : {&t.access_key, &t.secret_key, &t.session_token})
    for (char c : *s)
      if (c == '\r' || c == '\n')
        throw std::invalid_argument(t.where + ": a credential contains a line break");
  return t;
}

}  // namespace gdfs::remote
