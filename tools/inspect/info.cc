// `info`: the superblock, feature bits, inode counts and region sizes of an image.
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>

#include "commands.h"
#include "gdfs/trust.h"
#include "util.h"

namespace gdfs::inspect {
namespace {

constexpr const char* kSectionNames[format::kSectionCount] = {
    "inodes", "attrs", "dirents", "pages", "sparse", "hole_runs", "xattr_sets", "xattr_pairs", "blob"};

std::string uuid_string(const uint8_t* u) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                u[15]);
  return buf;
}

std::string label_of(const format::Superblock& sb) {
  return {sb.label, strnlen(sb.label, sizeof sb.label)};  // NUL-padded, not necessarily terminated
}

// Names of the set bits; bits this build does not know are shown as one hex value.
std::vector<std::string> feature_names(uint64_t bits, bool incompat) {
  std::vector<std::pair<uint64_t, const char*>> known;
  if (incompat) {
    known = {{format::kIncompatBitpack, "bitpack"},
             {format::kIncompatLayers, "layers"},
             {format::kIncompatX86, "x86"}};
  } else {
    known = {{format::kCompatDedupe, "dedupe"},
             {format::kCompatTailPack, "tail-pack"},
             {format::kCompatSigned, "signed"}};
  }
  std::vector<std::string> names;
  for (auto [bit, name] : known)
    if (bits & bit) names.push_back(name), bits &= ~bit;
  if (bits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bits));
    names.push_back(buf);
  }
  return names;
}

struct Counts {
  uint64_t files = 0, dirs = 0, symlinks = 0, devices = 0, fifos = 0, sockets = 0, hardlinked = 0;
};

// The counter of each file type (character and block devices share one).
constexpr std::pair<uint32_t, uint64_t Counts::*> kCounters[] = {
    {format::kTypeReg, &Counts::files},    {format::kTypeDir, &Counts::dirs},
    {format::kTypeLnk, &Counts::symlinks}, {format::kTypeChr, &Counts::devices},
    {format::kTypeBlk, &Counts::devices},  {format::kTypeFifo, &Counts::fifos},
    {format::kTypeSock, &Counts::sockets}};

Counts count_inodes(const Image& img) {
  Counts c;
  for (uint32_t ino = 1; ino <= img.inode_count(); ++ino) {
    const format::Attr& at = img.attr(ino);
    for (const auto& [type, counter] : kCounters)
      if ((at.mode & format::kTypeMask) == type) ++(c.*counter);
    if ((at.mode & format::kTypeMask) != format::kTypeDir && at.nlink > 1) ++c.hardlinked;
  }
  return c;
}

std::string joined(const std::vector<std::string>& features) {
  return text::join(features, ", ", "none");
}

// The chain of a layered image: each base, where it was found, and how much of this image it holds.
Json layers_json(const Image& img) {
  Json layers = Json::array();
  std::vector<uint64_t> entries(img.layers().size() + 1), bytes(img.layers().size() + 1);
  for (const format::PageEntry& e : img.stored_pages()) ++entries[e.layer], bytes[e.layer] += e.csize;
  for (size_t k = 0; k < img.layers().size(); ++k) {
    const Image::Layer& l = img.layers()[k];
    layers.push_back({{"layer", k + 1},
                      {"hint", l.hint},
                      {"location", url_for_messages(l.location)},
                      {"uuid", uuid_string(l.ref.uuid)},
                      {"image_size", l.ref.image_size},
                      {"page_entries", entries[k + 1]},
                      {"stored_bytes", bytes[k + 1]}});
  }
  return layers;
}

// Whether the image is signed, by which key (its fingerprint, as recorded: only --key checks it), and
// whether this open verified it.
Json signature_json(const Image& img) {
  const format::Superblock& sb = img.superblock();
  Json j = {{"signed", (sb.compat & format::kCompatSigned) != 0}, {"verified", img.trusted()}};
  if (!(sb.compat & format::kCompatSigned)) return j;
  format::SignatureHeader h{};
  ReadRange r{sb.sig_offset, sizeof h, reinterpret_cast<uint8_t*>(&h)};
  if (sb.sig_offset <= img.source().size() && sizeof h <= img.source().size() - sb.sig_offset)
    img.source().read({&r, 1});
  j["key"] = r.ok ? trust::hex(h.key_id) : "unreadable";
  return j;
}

Json to_json(const Image& img, const Counts& c) {
  const format::Superblock& sb = img.superblock();
  Json sections = Json::object();
  for (uint32_t i = 0; i < format::kSectionCount; ++i) {
    const auto s = static_cast<format::Section>(i);
    sections[kSectionNames[i]] = {{"stored", img.section_stored_bytes(s)}, {"memory", img.section_bytes(s)}};
  }
  return {
      {"image", img.name()},
      {"version", std::to_string(sb.major) + "." + std::to_string(sb.minor)},
      {"uuid", uuid_string(sb.uuid)},
      {"label", label_of(sb)},
      {"time", iso_time(sb.time_sec, sb.time_nsec)},
      {"time_sec", sb.time_sec},
      {"time_nsec", sb.time_nsec},
      {"page_size", img.page_size()},
      {"mkfs_level", sb.mkfs_level},
      {"features",
       {{"compat", feature_names(sb.compat, false)}, {"incompat", feature_names(sb.incompat, true)}}},
      {"inodes",
       {{"total", img.inode_count()},
        {"files", c.files},
        {"dirs", c.dirs},
        {"symlinks", c.symlinks},
        {"devices", c.devices},
        {"fifos", c.fifos},
        {"sockets", c.sockets},
        {"hardlinked", c.hardlinked}}},
      {"page_entries", sb.page_count},
      {"sizes",
       {{"image", sb.image_size},
        {"data", sb.data_size},
        {"metadata", sb.meta_size},
        {"metadata_memory", sb.meta_usize},
        {"metadata_blocks", sb.meta_blocks},
        {"metadata_block_table", img.meta_table_bytes()},
        {"sections", sections},
        {"file_bytes", sb.file_bytes}}},
      {"ratio", ratio(sb.file_bytes, sb.image_size)},
      {"layers", layers_json(img)},
      {"signature", signature_json(img)},
  };
}

void print_text(std::ostream& out, const Json& j) {
  auto line = [&](const char* key, const std::string& value) {
    out << key << std::string(16 - std::strlen(key), ' ') << value << "\n";
  };
  auto num = [](const Json& v) { return std::to_string(v.get<uint64_t>()); };
  const Json& in = j["inodes"];
  const Json& sz = j["sizes"];
  line("image", printable_name(j["image"].get<std::string>()));
  line("version", j["version"]);
  line("uuid", j["uuid"]);
  line("label", printable_name(j["label"].get<std::string>()));
  line("time", j["time"]);
  line("page size", num(j["page_size"]));
  line("mkfs level", num(j["mkfs_level"]));
  line("compat", joined(j["features"]["compat"]));
  line("incompat", joined(j["features"]["incompat"]));
  line("inodes", num(in["total"]) + ": " + num(in["files"]) + " files, " + num(in["dirs"]) + " dirs, " +
                     num(in["symlinks"]) + " symlinks, " + num(in["devices"]) + " devices, " +
                     num(in["fifos"]) + " fifos, " + num(in["sockets"]) + " sockets");
  line("hardlinked", num(in["hardlinked"]) + " inodes");
  line("page entries", num(j["page_entries"]));
  line("image size", num(sz["image"]) + " bytes");
  line("data region", num(sz["data"]) + " bytes");
  line("metadata", num(sz["metadata"]) + " bytes stored, " + num(sz["metadata_memory"]) + " in memory, " +
                       num(sz["metadata_blocks"]) + " blocks");
  line("  block table", num(sz["metadata_block_table"]) + " bytes");
  for (const auto& [name, s] : sz["sections"].items())
    line(("  " + name).c_str(), num(s["stored"]) + " bytes stored, " + num(s["memory"]) + " in memory");
  line("file bytes", num(sz["file_bytes"]) + " bytes");
  line("ratio", fixed(j["ratio"].get<double>(), 3));
  const Json& sig = j["signature"];
  line("signature", !sig["signed"].get<bool>()
                        ? "none"
                        : "key " + sig["key"].get<std::string>() +
                              (sig["verified"].get<bool>() ? " (verified)" : " (not checked: give --key)"));
  for (const Json& l : j["layers"])
    line(("layer " + num(l["layer"])).c_str(),
         printable_name(l["location"].get<std::string>()) + " (uuid " + l["uuid"].get<std::string>() +
             "): " + num(l["page_entries"]) + " page entries, " + num(l["stored_bytes"]) + " stored bytes");
}

}  // namespace

int info(const Options& o, std::ostream& out) {
  auto img = open_image(o);
  return print_report(out, to_json(*img, count_inodes(*img)), o.json, print_text);
}

}  // namespace gdfs::inspect
