# Embeds every kernel source under a folder (ptx_src/) into the library, so that an installed
# ptxrt needs no source tree. Filled in by the [jit] work.
function(ptxrt_embed_kernels target folder)
endfunction()
