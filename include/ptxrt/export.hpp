// PTXRT_API marks what a shared libptxrt exports: the public API declared in these headers. The
// library is built with hidden visibility, so everything else (the layers' internals, and the
// templates of the libraries it uses inside, such as nlohmann-json) stays out of its dynamic
// symbol table. In a static build the mark changes nothing.
#pragma once

#define PTXRT_API __attribute__((visibility("default")))
