#include <doctest/doctest.h>

#include <string>

#include "jit/hash.hpp"

TEST_CASE("sha256 matches the FIPS 180-2 test vectors") {
  CHECK(ptxrt::sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(ptxrt::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(ptxrt::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(ptxrt::sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 fed in pieces equals sha256 of the whole") {
  std::string text(300, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i % 26);
  ptxrt::Sha256 pieces;
  pieces.update(text.substr(0, 7)).update(text.substr(7, 100)).update(text.substr(107));
  CHECK(pieces.hex_digest() == ptxrt::sha256_hex(text));
}

TEST_CASE("update_field separates fields so that shifted boundaries hash differently") {
  CHECK(ptxrt::Sha256().update_field("ab").update_field("c").hex_digest() !=
        ptxrt::Sha256().update_field("a").update_field("bc").hex_digest());
}
