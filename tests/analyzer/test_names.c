/* Unit tests of names.c: the demangler on CUDA-style kernel names, the
 * shortener and the normalizer used by --diff; and a no-crash sweep over
 * mutated names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

#include "../check.h"

static void expect_demangle(const char *in, const char *full, const char *name)
{
    gma_buf b = { 0 };
    size_t nb = 0, ne = 0;
    int rc = gma_demangle(in, strlen(in), &b, &nb, &ne);
    if (!full) {
        CHECK(rc != 0, "demangle %s: expected failure, got \"%s\"", in, gma_buf_str(&b));
        gma_buf_free(&b);
        return;
    }
    int full_ok = rc == 0 && strcmp(gma_buf_str(&b), full) == 0;
    CHECK(full_ok, "demangle %s:\n  got      \"%s\" (rc %d)\n  expected \"%s\"", in, gma_buf_str(&b), rc, full);
    if (full_ok && name)
        CHECK(ne - nb == strlen(name) && memcmp(b.p + nb, name, ne - nb) == 0,
              "demangle %s: name part \"%.*s\", expected \"%s\"", in, (int)(ne - nb), b.p + nb, name);
    gma_buf_free(&b);
}

static void expect_short(const char *in, size_t max, const char *want)
{
    gma_buf b = { 0 };
    gma_name_short(in, strlen(in), max, &b);
    CHECK(strcmp(gma_buf_str(&b), want) == 0 && !(max && b.len > max), "short(%s, %zu): \"%s\", expected \"%s\"", in,
          max, gma_buf_str(&b), want);
    gma_buf_free(&b);
}

static void expect_norm(const char *in, int kernel, const char *want)
{
    gma_buf b = { 0 };
    gma_name_normalize(in, strlen(in), kernel, &b);
    CHECK(strcmp(gma_buf_str(&b), want) == 0, "normalize(%s): \"%s\", expected \"%s\"", in, gma_buf_str(&b), want);
    gma_buf_free(&b);
}

/* s of n bytes: head, then c up to n - strlen(tail), then tail. */
static char *filled(size_t n, const char *head, char c, const char *tail)
{
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    size_t h = strlen(head), t = strlen(tail);
    memcpy(s, head, h);
    memset(s + h, c, n - h - t);
    memcpy(s + n - t, tail, t);
    s[n] = 0;
    return s;
}

/* Names of 1 MiB: a label is made from the first and last GMA_SHORT_SCAN / 2
 * bytes of the qualified name, whatever lies between. */
static void test_long(void)
{
    size_t n = 1u << 20;
    char *a = filled(n, "void ns::f<", 'a', ">(int)");
    char *b = filled(n, "k_begin", 'x', "_end");
    /* "ns::f<" + 2 KiB of the 'a's ... the last 2 KiB ending in ">": elided */
    char *c = filled(3 * GMA_SHORT_SCAN, "ns::f<", 'a', ">");
    CHECK(a && b && c, "out of memory");
    if (a && b && c) {
        expect_short(a, 60, "ns::f<...>");
        /* head (60 - 3) / 3 = 19, tail 38 */
        expect_short(b, 60, "k_beginxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_end");
        /* "::g<" in the middle is not looked at: the ends are one pair */
        memcpy(c + GMA_SHORT_SCAN, ">::g<", 5);
        expect_short(c, 60, "ns::f<...>");
        expect_short(c, 0, c);
    }
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    expect_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
                    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                    "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
                    "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >");
    expect_demangle("_ZN12_GLOBAL__N_116softmax_warp_fwdIfLi10EEEvPT_PKS1_i",
                    "void (anonymous namespace)::softmax_warp_fwd<float, 10>(float*, float const*, int)", NULL);
    expect_demangle("_Z4funcPFviEPA10_iPPFviERKSt6vectorIiSaIiEE",
                    "func(void (*)(int), int (*) [10], void (**)(int), std::vector<int, std::allocator<int> > const&)",
                    "func");
    expect_demangle("_ZNK3Foo3barEv", "Foo::bar() const", "Foo::bar");
    expect_demangle("_ZN3FooC2Ev", "Foo::Foo()", NULL);
    expect_demangle("_ZN3FooD1Ev", "Foo::~Foo()", NULL);
    expect_demangle("_Z5applyIXadL_Z3foovEEEvv", "void apply<&foo>()", NULL);
    expect_demangle("_Z1fILb1ELin5EEvv", "void f<true, -5>()", NULL);
    expect_demangle("_Z9my_kernelPfi", "my_kernel(float*, int)", "my_kernel");
    expect_demangle("_Z9my_kernelPfi.clone.1", "my_kernel(float*, int)", NULL);
    expect_demangle("_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_"
                    "kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE7_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_",
                    "void at::native::elementwise_kernel<128, 2, void at::native::gpu_kernel_impl_nocast<at::native::"
                    "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#9}::"
                    "operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_"
                    "cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#9}::operator()() const"
                    "::{lambda(float)#1} const&)::{lambda(int)#1}>(int, void at::native::gpu_kernel_impl_nocast<at::"
                    "native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
                    "{lambda()#9}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_"
                    "copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#9}::"
                    "operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})",
                    NULL);
    expect_demangle("_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_9GemmShapeILi128ELi128E"
                    "Li8EEEEEEEEEvNT_6ParamsE",
                    "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<cutlass::"
                    "gemm::GemmShape<128, 128, 8> > > >(cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::"
                    "MmaPipelined<cutlass::gemm::GemmShape<128, 128, 8> > >::Params)",
                    NULL);
    expect_demangle("_ZN4test8kernel_aIfLi4EEEvPT_i", "void test::kernel_a<float, 4>(float*, int)",
                    "test::kernel_a<float, 4>");
    /* not mangled, or not readable: the callers keep the raw text */
    expect_demangle("ampere_sgemm_128x64_nn", NULL, NULL);
    expect_demangle("_Z", NULL, NULL);
    expect_demangle("_ZN3foo", NULL, NULL);
    expect_demangle("_Z25cunn_SoftMaxForwardv", NULL, NULL); /* length prefix longer than the name */

    expect_short("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 60,
                 "at::native::vectorized_elementwise_kernel<...>");
    expect_short("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 0,
                 "at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >");
    expect_short("_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock12MmaPipelinedINS1_9GemmShapeILi128ELi128E"
                 "Li8EEEEEEEEEvNT_6ParamsE",
                 60, "cutlass::Kernel<cutlass::gemm::kernel::Gemm<...> >");
    expect_short("kernel_b", 60, "kernel_b");
    /* names that arrive demangled already */
    expect_short("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, "
                 "1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
                 60, "at::native::vectorized_elementwise_kernel<...>");
    expect_short("void (anonymous namespace)::softmax_warp_fwd<float, 10>(float*, float const*, int)", 0,
                 "(anonymous namespace)::softmax_warp_fwd<float, 10>");
    expect_short("Foo::bar() const", 0, "Foo::bar");
    expect_short("bool Foo::operator<(Foo const&) const", 0, "Foo::operator<");
    expect_norm("void attn::softmax<128>(float*)", 1, "attn::softmax");
    expect_short("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute", 40,
                 "sm90_xmma_ge...arpgroupsize1x1x1_execute");
    expect_short("_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi4EEENS1_"
                 "14UnaryOpFunctorIfLi4ELi1ELi1EEEJNS0_4SqrtIfEEEEEvT_T0_DpT1_",
                 60, "at::native::(anon)::multi_tensor_apply_kernel<...>");

    expect_norm("triton_poi_fused_add_0", 1, "triton_poi_fused_add");
    expect_norm("triton_poi_fused_add_17", 1, "triton_poi_fused_add");
    expect_norm("layer_3", 0, "layer_3");
    expect_norm("_ZN4attn7softmaxILi128EEEvPf", 1, "attn::softmax");
    expect_norm("_ZN4attn7softmaxILi256EEEvPf", 1, "attn::softmax");
    expect_norm("alloc at 0x7f3a2b001000 done", 0, "alloc at  done");
    expect_norm("graph_1b9a1d8e42_run", 0, "graph__run");
    expect_norm("operator<<", 0, "operator<<");
    expect_norm("aten::mm, seq = 12, op_id = 345", 0, "aten::mm");
    expect_norm("aten::addmm, op_id = 7, sizes = [[8], [8, 8]]", 0, "aten::addmm");
    expect_norm("layer.3", 0, "layer.3");
    CHECK(gma_nvtx_base_len("aten::mm, seq = 1", 17) == 8 && gma_nvtx_base_len("step 4", 6) == 6);
    expect_norm("_ZN3FoolsERKS_", 1, "Foo::operator<<");
    expect_short("_ZN3FoolsIiEERS_RKT_", 0, "Foo::operator<< <int>");

    /* No input may crash or hang the demangler: mutate real names. */
    const char *seeds[] = {
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
        ("_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_"
         "cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE7_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_"),
        "_Z4funcPFviEPA10_iPPFviERKSt6vectorIiSaIiEE",
    };
    const char alphabet[] = "_ZNIESLTDXJKPRVOFAMUlvtiEcfdsj0123456789CG.bnarmxyp";
    unsigned x = 1;
    char s[256];
    for (int it = 0; it < 200000; it++) {
        const char *seed = seeds[it % 3];
        size_t n = strlen(seed);
        if (n > sizeof(s) - 1)
            n = sizeof(s) - 1;
        memcpy(s, seed, n);
        for (int k = 0; k < 1 + it % 4; k++) {
            x = x * 1103515245u + 12345u;
            s[(x >> 8) % n] = alphabet[(x >> 16) % (sizeof(alphabet) - 1)];
        }
        if (it % 5 == 0) {
            x = x * 1103515245u + 12345u;
            n = 2 + (x >> 8) % (n - 2);
        }
        s[n] = 0;
        gma_buf b = { 0 };
        gma_demangle(s, n, &b, NULL, NULL);
        gma_name_short(s, n, 40, &b);
        gma_name_normalize(s, n, 1, &b);
        gma_buf_free(&b);
    }
    test_long();
    return tc_result("gma_test_names");
}
