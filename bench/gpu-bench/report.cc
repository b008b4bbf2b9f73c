#include "report.h"

#include <algorithm>
#include <cstdio>

namespace gdfs::gpubench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string check_text(const Row& r) {
  if (!r.error.empty()) return "ERROR";
  if (!r.checked) return "-";
  return r.bad == 0 ? "ok" : std::to_string(r.bad) + " bad";
}

struct Section {
  const char* key;
  const char* title;
};
const Section kSections[] = {
    {"kernel", "kernel only: all pages in device memory, batches back to back on one stream (CUDA events)"},
    {"kernel-gdeflate", "kernel only, GDeflate pages only: ours (same pages as the nvCOMP rows)"},
    {"nvcomp", "kernel only, GDeflate pages only: nvCOMP batched GDeflate on the same device pages"},
    {"e2e",
     "end to end from pinned host memory: copy in, decode, copy out, chunks over streams (wall clock)"},
    {"e2e-device",
     "end to end to device memory: copy in and decode, the output left on the device (wall clock)"},
    {"copies", "copies only, no decode: the transfer bound of the end-to-end rows (wall clock)"},
    {"h2d", "host-to-device copy alone, pinned: GB/s of stored bytes (wall clock)"},
    {"batch-decoder", "BatchDecoder::decode: pageable buffers, host gather/scatter included (wall clock)"},
    {"cpu", "CPU: gdeflate::Decompressor (kAuto) and bitpack per thread, every page (wall clock)"},
};

std::string json_escape(const std::string& s) {
  std::string o;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += ch;
    }
  }
  return o;
}

std::string q(const std::string& s) {
  std::string o = "\"";  // (not "\"" + ...: GCC 12 reports a false -Wrestrict there)
  o += json_escape(s);
  o += '"';
  return o;
}

std::string num(double v) {
  return fmt("%.6g", v);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\*?;&|<>()") == std::string::npos;
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

}  // namespace

double Row::median_ms() const {
  if (ms.empty()) return 0;
  std::vector<double> v = ms;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double Row::best_ms() const {
  return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
}

void print_header(std::ostream& os, const Report& r) {
  os << "gdfs-gpu-bench\n";
  os << "date: " << r.date << "   host: " << r.host << "\n";
  os << "cpu: " << r.cpu << ", " << r.cores << " hardware threads\n";
  os << "command: " << command_line(r.argv) << "\n";
  const DeviceInfo& d = r.device;
  if (d.present) {
    os << "device " << d.index << ": " << d.name << ", compute capability " << d.cc_major << "." << d.cc_minor
       << ", " << d.sms << " SMs at " << fmt("%.0f", d.clock_khz / 1e3) << " MHz, "
       << fmt("%.1f", double(d.global_mem) / (1u << 30)) << " GiB (" << d.bus_bits << "-bit, "
       << fmt("%.0f", d.mem_clock_khz / 1e3) << " MHz), L2 " << fmt("%.0f", double(d.l2) / (1u << 20))
       << " MiB, shared memory " << d.smem_per_sm / 1024 << " KiB per SM\n";
    os << "cuda: driver " << version(d.driver) << ", runtime " << version(d.runtime) << " (static)\n";
    const uint64_t per_block = d.smem_per_warp * d.warps_per_block;
    os << "decode kernel: " << d.warps_per_block << " warps (pages) per block, " << d.smem_per_warp
       << " bytes of shared memory per warp, " << per_block << " per block";
    if (per_block) os << " (at most " << d.smem_per_sm / per_block << " blocks per SM by shared memory)";
    os << "\n";
  } else {
    os << "device: none (" << d.why << ")\n";
  }
  if (!r.nvcomp.empty()) os << "nvcomp: " << r.nvcomp << "\n";
  if (const Corpus* c = r.corpus) {
    os << "corpus: " << c->name << ":";
    for (const std::string& p : c->roots) os << " " << p;
    os << "\n  " << c->files << " files, " << c->pages.size()
       << " pages of 64 KiB (the last of each file short), " << c->raw_bytes() << " bytes -> "
       << c->stored_bytes << " stored bytes, ratio " << fmt("%.3f", c->ratio())
       << "\n  coding: GDeflate level " << c->level << ", codec " << c->codec_desc << "; mix:";
    const char* sep = " ";
    for (uint8_t k : {uint8_t{2}, uint8_t{1}, uint8_t{3}}) {
      if (!c->count[k]) continue;
      os << sep << codec_name(k) << " " << c->count[k] << " pages";
      if (k != 1)
        os << " (ratio " << fmt("%.3f", double(c->raw_by_codec[k]) / double(c->enc_by_codec[k])) << ")";
      sep = ", ";
    }
    os << "\n  loaded in " << fmt("%.2f", c->load_s) << " s, coded in " << fmt("%.2f", c->encode_s)
       << " s on " << c->encode_threads << " threads ("
       << fmt("%.0f", double(c->raw_bytes()) / 1e6 / c->encode_s) << " MB/s)\n";
  }
  for (const std::string& n : r.notes) os << "note: " << n << "\n";
}

void print_rows(std::ostream& os, const Report& r) {
  for (const Section& s : kSections) print_section(os, r, s.key);
}

void print_section(std::ostream& os, const Report& r, const std::string& key) {
  for (const Section& s : kSections) {
    if (key != s.key) continue;
    std::vector<const Row*> rows;
    for (const Row& row : r.rows)
      if (row.section == s.key) rows.push_back(&row);
    if (rows.empty()) continue;
    os << "\n" << s.title << "\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-26s %8s %9s %10s %10s %8s %8s %9s %10s  %s\n", "config", "pages",
                  "MB", "median ms", "best ms", "GB/s", "best", "Mpage/s", "us/launch", "check");
    os << line;
    for (const Row* row : rows) {
      if (!row->error.empty()) {
        os << "  " << row->config << ": ERROR " << row->error << "\n";
        continue;
      }
      const double med = row->median_ms(), best = row->best_ms();
      const double gbs = med > 0 ? double(row->bytes) / (med * 1e6) : 0;
      const double gbs_best = best > 0 ? double(row->bytes) / (best * 1e6) : 0;
      const double mps = med > 0 ? double(row->pages) / (med * 1e3) : 0;
      const std::string per_launch = row->launches ? fmt("%10.1f", med * 1e3 / double(row->launches)) : "-";
      std::snprintf(line, sizeof line, "  %-26s %8llu %9.1f %10.3f %10.3f %8.2f %8.2f %9.3f %10s  %s",
                    row->config.c_str(), static_cast<unsigned long long>(row->pages),
                    double(row->bytes) / 1e6, med, best, gbs, gbs_best, mps, per_launch.c_str(),
                    check_text(*row).c_str());
      os << line;
      if (!row->note.empty()) os << "  " << row->note;
      os << "\n";
    }
  }
}

void print_json(std::ostream& os, const Report& r) {
  os << "{\n  \"tool\": \"gdfs-gpu-bench\",\n  \"date\": " << q(r.date) << ",\n  \"host\": " << q(r.host)
     << ",\n  \"cpu\": " << q(r.cpu) << ",\n  \"cores\": " << r.cores << ",\n  \"command\": [";
  for (size_t i = 0; i < r.argv.size(); ++i) os << (i ? ", " : "") << q(r.argv[i]);
  os << "],\n";
  const DeviceInfo& d = r.device;
  os << "  \"device\": {\"present\": " << (d.present ? "true" : "false");
  if (d.present) {
    os << ", \"index\": " << d.index << ", \"name\": " << q(d.name) << ", \"compute_capability\": \""
       << d.cc_major << "." << d.cc_minor << "\", \"sms\": " << d.sms << ", \"global_mem\": " << d.global_mem
       << ", \"l2_bytes\": " << d.l2 << ", \"smem_per_sm\": " << d.smem_per_sm
       << ", \"clock_khz\": " << d.clock_khz << ", \"mem_clock_khz\": " << d.mem_clock_khz
       << ", \"bus_bits\": " << d.bus_bits << ", \"driver\": \"" << version(d.driver) << "\", \"runtime\": \""
       << version(d.runtime) << "\", \"smem_per_warp\": " << d.smem_per_warp
       << ", \"warps_per_block\": " << d.warps_per_block;
  } else {
    os << ", \"why\": " << q(d.why);
  }
  os << "},\n";
  if (!r.nvcomp.empty()) os << "  \"nvcomp\": " << q(r.nvcomp) << ",\n";
  if (const Corpus* c = r.corpus) {
    os << "  \"corpus\": {\"name\": " << q(c->name) << ", \"roots\": [";
    for (size_t i = 0; i < c->roots.size(); ++i) os << (i ? ", " : "") << q(c->roots[i]);
    os << "], \"files\": " << c->files << ", \"pages\": " << c->pages.size()
       << ", \"bytes\": " << c->raw_bytes() << ", \"stored_bytes\": " << c->stored_bytes
       << ", \"ratio\": " << num(c->ratio()) << ", \"level\": " << c->level
       << ", \"codec\": " << q(c->codec_desc) << ", \"mix\": {";
    bool first = true;
    for (uint8_t k : {uint8_t{2}, uint8_t{1}, uint8_t{3}}) {
      os << (first ? "" : ", ") << q(codec_name(k)) << ": {\"pages\": " << c->count[k]
         << ", \"bytes\": " << c->raw_by_codec[k] << ", \"stored_bytes\": " << c->enc_by_codec[k] << "}";
      first = false;
    }
    os << "}, \"load_s\": " << num(c->load_s) << ", \"encode_s\": " << num(c->encode_s)
       << ", \"encode_threads\": " << c->encode_threads << "},\n";
  }
  os << "  \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) os << (i ? ", " : "") << q(r.notes[i]);
  os << "],\n  \"rows\": [";
  bool all_ok = true;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const Row& row = r.rows[i];
    all_ok = all_ok && row.ok();
    const double med = row.median_ms(), best = row.best_ms();
    os << (i ? "," : "") << "\n    {\"section\": " << q(row.section) << ", \"config\": " << q(row.config)
       << ", \"batch\": " << row.batch << ", \"launches\": " << row.launches << ", \"pages\": " << row.pages
       << ", \"bytes\": " << row.bytes << ", \"ms\": [";
    for (size_t k = 0; k < row.ms.size(); ++k) os << (k ? ", " : "") << num(row.ms[k]);
    os << "], \"median_ms\": " << num(med) << ", \"best_ms\": " << num(best)
       << ", \"gbps\": " << num(med > 0 ? double(row.bytes) / (med * 1e6) : 0)
       << ", \"best_gbps\": " << num(best > 0 ? double(row.bytes) / (best * 1e6) : 0)
       << ", \"pages_per_s\": " << num(med > 0 ? double(row.pages) / (med * 1e-3) : 0)
       << ", \"checked\": " << (row.checked ? "true" : "false") << ", \"bad_pages\": " << row.bad
       << ", \"ok\": " << (row.ok() ? "true" : "false");
    if (!row.note.empty()) os << ", \"note\": " << q(row.note);
    if (!row.error.empty()) os << ", \"error\": " << q(row.error);
    os << "}";
  }
  os << "\n  ],\n  \"ok\": " << (all_ok ? "true" : "false") << "\n}\n";
}

}  // namespace gdfs::gpubench
