// Ed25519 key pairs for the signed-image tests, written as `openssl genpkey -algorithm ed25519` and
// `openssl pkey -pubout` write them (PEM), without needing the openssl command.
#pragma once
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace gdfs::test {

struct KeyPair {
  std::string priv, pub;  // the PEM files
};

inline KeyPair make_key_pair(const std::string& stem) {
  KeyPair k{stem + ".pem", stem + ".pub"};
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  FILE* priv = key ? std::fopen(k.priv.c_str(), "w") : nullptr;
  FILE* pub = priv ? std::fopen(k.pub.c_str(), "w") : nullptr;
  const bool ok = pub && PEM_write_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr) == 1 &&
                  PEM_write_PUBKEY(pub, key) == 1;
  if (priv) std::fclose(priv);
  if (pub) std::fclose(pub);
  EVP_PKEY_free(key);
  if (!ok) throw std::runtime_error("cannot make an Ed25519 key pair at " + stem);
  return k;
}

}  // namespace gdfs::test
