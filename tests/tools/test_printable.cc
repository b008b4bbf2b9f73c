// Names (and any untrusted text) made safe to print: gdfs/printable.h, shared by the reader, mkfs and
// the tools.
#include <gtest/gtest.h>

#include "gdfs/printable.h"

namespace gdfs {
namespace {

TEST(Printable, ControlBytesAndInvalidUtf8AreEscapedValidUtf8Stays) {
  EXPECT_EQ(printable_name("plain name.txt"), "plain name.txt");
  EXPECT_EQ(printable_name("new\nline\x1b[2J\x7f"), "new\\x0aline\\x1b[2J\\x7f");
  EXPECT_EQ(printable_name("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81");
  EXPECT_EQ(printable_name("bad\xff\xfename"), "bad\\xff\\xfename");
  EXPECT_EQ(printable_name("\xc2\x9b[31m"), "\\xc2\\x9b[31m");            // C1 CSI: a terminal escape
  EXPECT_EQ(printable_name("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable_name("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong, three bytes
  EXPECT_EQ(printable_name("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a UTF-16 surrogate
  EXPECT_EQ(printable_name("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable_name("cut \xe2\x82"), "cut \\xe2\\x82");            // a character cut short
  EXPECT_EQ(printable_name("\x80stray"), "\\x80stray");                   // a lone continuation byte
  EXPECT_EQ(printable_name(std::string_view("nul\0byte", 8)), "nul\\x00byte");
}

}  // namespace
}  // namespace gdfs
