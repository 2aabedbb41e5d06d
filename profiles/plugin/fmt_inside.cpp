// The compiled part of {fmt} inside the plugin. libnccl-tuner-railkit.so is loaded into every
// training process, so it must need nothing beyond libc, libstdc++, libm and libgcc: instead of
// linking libfmt it compiles fmt's out-of-line functions (format-inl.h, fmt's own header) here,
// hidden like every other symbol of the plugin, and --as-needed leaves libfmt out.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {
// The formatting loop vformat() calls; fmt's headers declare it extern for char.
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>, locale_ref);
template FMT_API auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE
