/*
 * Deterministic synthetic training-like trace (see synth.h for the model).
 *
 * The step is compiled once into a small "program" of operations (allocate
 * buffer slot, launch kernel, free slot, NVTX push/pop, copy, tag); each
 * active step replays it with fresh timing, correlation ids, launch numbers
 * and range ids, so generation costs a few branches and one PRNG draw per
 * record (tens of millions of records per second).  One gmt_record is
 * reused for every emission: it is large (TAG carries 64 devices), so it is
 * never copied or cleared per record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "synth.h"

#ifndef GMEMPROF_VERSION
#define GMEMPROF_VERSION "0"
#endif

/* ---- model constants ---------------------------------------------------- */

#define BATCH 8u
#define SEQ 1024u
#define HIDDEN 768u
#define HEADS 12u
#define VOCAB 50304u
#define TOKENS ((uint64_t)BATCH * SEQ)

#define TID_MAIN 48213u
#define STREAM_MAIN 7u
#define DEVICE_TOTAL (141ull * 1000 * 1000 * 1000) /* an H200 */
#define POOL_BASE 0x7f3a00000000ull
#define POOL_ALIGN 512u
#define SAMPLE_PERIOD_NS 100000000ull /* MEMSAMPLE every 100 ms: the profiler's default */
#define FRAME_PERIOD_NS 1000000000ull /* a frame edge at least once a second */
#define CONTEXT_BYTES (527ull << 20) /* CUDA context + cuBLAS workspace: driver view only */

/* Kernel table: ~40 distinct mangled names with a launch shape each. */
typedef struct kdef {
    const char *name;
    uint32_t us;       /* base duration, microseconds */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t regs;
    uint32_t smem;     /* static shared memory */
    uint32_t dsmem;    /* dynamic shared memory */
} kdef;

enum {
    K_EMB, K_LN, K_GEMM_QKV, K_FLASH_FWD, K_GEMM_PROJ, K_ADD, K_GEMM_FC1, K_GELU, K_GEMM_FC2, K_GEMM_LMHEAD,
    K_LOGSOFTMAX, K_NLL, K_NLL_BWD, K_LOGSOFTMAX_BWD, K_GEMM_DGRAD, K_GEMM_WGRAD, K_GELU_BWD, K_FLASH_BWD,
    K_FLASH_DQ, K_FLASH_DOT, K_LN_BWD_GB, K_LN_BWD_IN, K_REDUCE_SUM, K_MUL, K_EMB_BWD, K_RADIX_SORT, K_ADAM,
    K_LPNORM, K_LPNORM_CLEANUP, K_FOREACH_MUL, K_FILL, K_CAST, K_DROPOUT, K_DROPOUT_BWD, K_ROPE, K_CAT,
    K_COPY, K_D2D, K_ARGMAX, K_SUM_F32, K_COUNT_
};

static const kdef KERNELS[K_COUNT_] = {
    [K_EMB] = { "_ZN2at6native12_GLOBAL__N_118indexSelectLargeIndexIN3c108BFloat16EljLi2ELi2ELin2ELb1EEEvNS_4cuda6detail10TensorInfoIT_T1_EESA_NS7_IT0_SB_EEiiSB_SB_l", 38, {12288, 1, 1}, {128, 1, 1}, 32, 0, 0 },
    [K_LN] = { "_ZN2at6native53_GLOBAL__N__1b9a1d8e_20_layer_norm_kernel_cu_342f9c1628vectorized_layer_norm_kernelIN3c108BFloat16EfEEviT0_PKT_S8_S8_PS5_S9_PS6_", 61, {8192, 1, 1}, {128, 1, 1}, 38, 0, 0 },
    [K_GEMM_QKV] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 412, {9, 64, 1}, {384, 1, 1}, 168, 0, 213248 },
    [K_FLASH_FWD] = { "_ZN5flash21flash_fwd_kernel_sm90INS_20Flash_fwd_kernel_traitsILi64ELi128ELi128ELi4ELb0ELb0EN7cutlass10bfloat16_tEEELb1ELb0ELb0ELb0ELb1ELb1ELb0ELb0EEEvNS_16Flash_fwd_paramsE", 388, {8, 8, 12}, {128, 1, 1}, 255, 0, 98304 },
    [K_GEMM_PROJ] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 143, {6, 64, 1}, {128, 1, 1}, 168, 0, 197632 },
    [K_ADD] = { "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_", 47, {6144, 1, 1}, {128, 1, 1}, 26, 0, 0 },
    [K_GEMM_FC1] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 547, {24, 32, 1}, {384, 1, 1}, 168, 0, 213248 },
    [K_GELU] = { "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_", 121, {24576, 1, 1}, {128, 1, 1}, 30, 0, 0 },
    [K_GEMM_FC2] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_on_kernel__5x_cublas", 561, {6, 64, 1}, {128, 1, 1}, 168, 0, 197632 },
    [K_GEMM_LMHEAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas_lmhead", 6810, {393, 32, 1}, {384, 1, 1}, 168, 0, 213248 },
    [K_LOGSOFTMAX] = { "_ZN2at6native43_GLOBAL__N__5d1e6b2c_10_SoftMax_cu_9f978f6317cunn_SoftMaxForwardILi8EN3c108BFloat16EffNS1_22LogSoftMaxForwardEpilogueEEEvPT2_PKT0_l", 2390, {8192, 1, 1}, {1024, 1, 1}, 40, 64, 0 },
    [K_NLL] = { "_ZN2at6native44_GLOBAL__N__2b3a8c1f_15_NLLLoss2d_cu_a8d5f3e128nll_loss_forward_reduce_cuda_kernel_2dIfflEEvPT_S6_PKS5_PKT1_S6_bllll", 21, {1, 1, 1}, {1024, 1, 1}, 30, 8192, 0 },
    [K_NLL_BWD] = { "_ZN2at6native44_GLOBAL__N__2b3a8c1f_15_NLLLoss2d_cu_a8d5f3e129nll_loss_backward_reduce_cuda_kernel_2dIflEEvPT_PKS5_PKT0_S6_S6_bllll", 18, {1, 1, 1}, {1024, 1, 1}, 24, 0, 0 },
    [K_LOGSOFTMAX_BWD] = { "_ZN2at6native43_GLOBAL__N__5d1e6b2c_10_SoftMax_cu_9f978f6318cunn_SoftMaxBackwardILi8EN3c108BFloat16EffNS1_23LogSoftMaxBackwardEpilogueEEEvPT0_PKT2_SA_l", 2512, {8192, 1, 1}, {1024, 1, 1}, 40, 64, 0 },
    [K_GEMM_DGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 433, {6, 64, 1}, {384, 1, 1}, 168, 0, 213248 },
    [K_GEMM_WGRAD] = { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", 455, {6, 18, 1}, {128, 1, 1}, 168, 0, 197632 },
    [K_GELU_BWD] = { "_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_26GeluBackwardCUDAKernelImplERNS_18TensorIteratorBaseENS0_8GeluTypeEENKUlvE_clEvENKUlvE2_clEvEUlN3c108BFloat16ES8_E_St5arrayIPcLm3EEEEviT0_T1_", 166, {24576, 1, 1}, {128, 1, 1}, 32, 0, 0 },
    [K_FLASH_BWD] = { "_ZN5flash37flash_bwd_dq_dk_dv_loop_seqk_parallel_kernelINS_20Flash_bwd_kernel_traitsILi64ELi128ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tEEELb1ELb0ELb0ELb0ELb1ELb1ELb0EEEvNS_16Flash_bwd_paramsE", 1021, {8, 8, 12}, {256, 1, 1}, 255, 0, 114688 },
    [K_FLASH_DQ] = { "_ZN5flash18convert_dQ_kernelINS_20Flash_bwd_kernel_traitsILi64ELi128ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tEEEEEvNS_16Flash_bwd_paramsEi", 44, {8, 8, 12}, {256, 1, 1}, 64, 0, 16384 },
    [K_FLASH_DOT] = { "_ZN5flash24flash_bwd_dot_do_o_kernelILb1ENS_20Flash_bwd_kernel_traitsILi64ELi128ELi128ELi8ELi2ELi4ELi2ELb0ELb0EN7cutlass10bfloat16_tEEEEEvNS_16Flash_bwd_paramsE", 39, {8, 8, 12}, {256, 1, 1}, 56, 0, 0 },
    [K_LN_BWD_GB] = { "_ZN2at6native53_GLOBAL__N__1b9a1d8e_20_layer_norm_kernel_cu_342f9c1631GammaBetaBackwardCUDAKernel_32IN3c108BFloat16EfEEvllPKT_S7_PKT0_SA_PS5_SB_", 58, {24, 1, 1}, {32, 32, 1}, 64, 8448, 0 },
    [K_LN_BWD_IN] = { "_ZN2at6native53_GLOBAL__N__1b9a1d8e_20_layer_norm_kernel_cu_342f9c1642layer_norm_grad_input_kernel_vectorizedIN3c108BFloat16EfEEvPKT_S7_PKT0_SA_S7_PS5_i", 73, {8192, 1, 1}, {128, 1, 1}, 40, 0, 1024 },
    [K_REDUCE_SUM] = { "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIN3c108BFloat16ENS0_14func_wrapper_tIfNS0_15sum_functorIS4_ffEEEEjS4_Li4EEEEEvT1_", 29, {12, 16, 1}, {32, 16, 1}, 40, 16, 2048 },
    [K_MUL] = { "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_", 41, {6144, 1, 1}, {128, 1, 1}, 26, 0, 0 },
    [K_EMB_BWD] = { "_ZN2at6native12_GLOBAL__N_135embedding_backward_feature_kernelIN3c108BFloat16EflEEvPKT1_PKT_PT0_illi", 233, {256, 1, 1}, {32, 32, 1}, 56, 0, 8192 },
    [K_RADIX_SORT] = { "_ZN3cub17CUB_200200_900_NS30DeviceRadixSortOnesweepKernelINS0_21DeviceRadixSortPolicyIllmE9Policy900ELb0ElllmEEvPT4_S6_PT3_PKS7_PT1_PKSB_PT2_PKSF_iii", 19, {16, 1, 1}, {384, 1, 1}, 72, 17920, 0 },
    [K_ADAM] = { "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi4EEENS1_14FusedAdamMathFunctorIfLi4ELNS1_8ADAM_MODEE1ELb0EEEJPfddddbbPKfS8_EEEvT_T0_DpT1_", 1580, {320, 1, 1}, {512, 1, 1}, 72, 0, 0 },
    [K_LPNORM] = { "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_14LpNormFunctorIfLi2ELb0EfEEJPfiEEEvT_T0_DpT1_", 311, {320, 1, 1}, {512, 1, 1}, 40, 2048, 0 },
    [K_LPNORM_CLEANUP] = { "_ZN2at6native12_GLOBAL__N_120lpnorm_cleanupIfLi2EfEEvPKT1_PT_PS3_ib", 6, {1, 1, 1}, {512, 1, 1}, 24, 2048, 0 },
    [K_FOREACH_MUL] = { "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_23BinaryOpScalarTensorFunctorIfLi1ELi1ELi0EEEJSt10multipliesIfEEEEvT_T0_DpT1_", 287, {320, 1, 1}, {512, 1, 1}, 32, 0, 0 },
    [K_FILL] = { "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_", 3, {1, 1, 1}, {128, 1, 1}, 16, 0, 0 },
    [K_CAST] = { "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_", 52, {6144, 1, 1}, {128, 1, 1}, 22, 0, 0 },
    [K_DROPOUT] = { "_ZN2at6native12_GLOBAL__N_120fused_dropout_kernelIN3c108BFloat16EfjLi1ELi4EhEEvNS_4cuda6detail10TensorInfoIKT_T1_EENS7_IS5_S9_EENS7_IT3_S9_EES9_T0_NS_15PhiloxCudaStateE", 64, {1056, 1, 1}, {256, 1, 1}, 40, 0, 0 },
    [K_DROPOUT_BWD] = { "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_21masked_scale_kernelIN3c108BFloat16EfhEEvRNS_6TensorERKS5_S8_T1_EUlS4_hE_St5arrayIPcLm3EEEEviT0_T1_", 51, {6144, 1, 1}, {128, 1, 1}, 28, 0, 0 },
    [K_ROPE] = { "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZZZNS0_15mul_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE4_clEvEUlN3c108BFloat16ES8_E_EEvS5_RKT_EUliE_EEviT1_", 36, {12288, 1, 1}, {128, 1, 1}, 30, 0, 0 },
    [K_CAT] = { "_ZN2at6native40_GLOBAL__N__a7c5e1c6_10_Shape_cu_49f7391c35CatArrayBatchedCopy_aligned16_contigIN3c108BFloat16EjLi3ELi128ELi1EEEvPT_NS1_25CatArrInputTensorMetadataIS6_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS9_Lj4EEEiS9_", 33, {2048, 1, 1}, {128, 1, 1}, 40, 0, 0 },
    [K_COPY] = { "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastINS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEEUlN3c108BFloat16EE_EEvS5_RKT_EUliE_EEviT1_", 45, {6144, 1, 1}, {128, 1, 1}, 30, 0, 0 },
    [K_D2D] = { "_ZN2at6native27unrolled_elementwise_kernelINS0_21copy_device_to_deviceERNS_14TensorIteratorEbEUlfE_St5arrayIPcLm2EELi4E23TrivialOffsetCalculatorILi1EjESA_NS0_6memory12LoadWithCastILi1EEENSB_13StoreWithCastILi1EEEEEviT_T0_T2_T3_T4_T5_", 9, {64, 1, 1}, {128, 1, 1}, 24, 0, 0 },
    [K_ARGMAX] = { "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIN3c108BFloat16ENS0_14ArgMaxOpsIS4_EElSt4pairIS4_lELi4EEEEEvT1_", 1210, {8192, 1, 1}, {32, 16, 1}, 48, 16, 4096 },
    [K_SUM_F32] = { "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfNS0_15sum_functorIfffEEEEjfLi4EEEEEvT1_", 8, {1, 1, 1}, {512, 1, 1}, 32, 16, 0 },
};

/* Names other than kernels, interned on first use like the profiler does. */
enum { N_FORWARD, N_BACKWARD, N_OPTIMIZER, N_LOSS, N_TAG_STEP_BEGIN, N_TAG_AFTER_OPT, N_LAYER0, N_FIXED_ };

/* ---- the step program --------------------------------------------------- */

typedef enum opcode { OP_ALLOC, OP_FREE, OP_KERNEL, OP_PUSH, OP_POP, OP_MEMCPY, OP_MEMSET, OP_TAG } opcode;

typedef struct op {
    uint8_t code;
    uint16_t arg;   /* kernel id, name index, or slot */
    uint32_t slot;  /* buffer slot (alloc/free/memset) */
    uint64_t bytes; /* alloc/copy size */
} op;

typedef struct prog {
    op *ops;
    size_t n, cap;
    uint32_t nslots;
    uint64_t *slot_bytes;
    size_t slot_cap;
    int err;
} prog;

static void prog_emit(prog *p, uint8_t code, uint16_t arg, uint32_t slot, uint64_t bytes)
{
    if (p->err)
        return;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 1024;
        op *no = realloc(p->ops, nc * sizeof(op));
        if (!no) {
            p->err = 1;
            return;
        }
        p->ops = no;
        p->cap = nc;
    }
    p->ops[p->n++] = (op){ code, arg, slot, bytes };
}

static uint32_t prog_alloc(prog *p, uint64_t bytes)
{
    if (p->err)
        return 0;
    if (p->nslots == p->slot_cap) {
        size_t nc = p->slot_cap ? p->slot_cap * 2 : 1024;
        uint64_t *ns = realloc(p->slot_bytes, nc * sizeof(uint64_t));
        if (!ns) {
            p->err = 1;
            return 0;
        }
        p->slot_bytes = ns;
        p->slot_cap = nc;
    }
    uint32_t s = p->nslots++;
    p->slot_bytes[s] = bytes;
    prog_emit(p, OP_ALLOC, 0, s, bytes);
    return s;
}

static void prog_free(prog *p, uint32_t s) { prog_emit(p, OP_FREE, 0, s, 0); }
static void prog_kernel(prog *p, int k) { prog_emit(p, OP_KERNEL, (uint16_t)k, 0, 0); }
static void prog_push(prog *p, int name) { prog_emit(p, OP_PUSH, (uint16_t)name, 0, 0); }
static void prog_pop(prog *p) { prog_emit(p, OP_POP, 0, 0, 0); }

/* Allocation of the output, then the kernel that writes it. */
static uint32_t prog_ak(prog *p, uint64_t bytes, int k)
{
    uint32_t s = prog_alloc(p, bytes);
    prog_kernel(p, k);
    return s;
}

/* Parameters of the model: sizes in bytes (fp32 master weights). */
typedef struct params {
    uint64_t *bytes;
    uint32_t n;
} params;

static int params_build(params *pp, unsigned layers)
{
    pp->n = 0;
    pp->bytes = malloc(sizeof(uint64_t) * (12u * layers + 4u));
    if (!pp->bytes)
        return -1;
    const uint64_t H = HIDDEN;
    pp->bytes[pp->n++] = (uint64_t)VOCAB * H * 4; /* token embedding (tied lm head) */
    pp->bytes[pp->n++] = (uint64_t)SEQ * H * 4;   /* position embedding */
    for (unsigned l = 0; l < layers; l++) {
        uint64_t lb[12] = { H * 4, H * 4, 3 * H * H * 4, 3 * H * 4, H * H * 4, H * 4,
                            H * 4, H * 4, 4 * H * H * 4, 4 * H * 4, 4 * H * H * 4, H * 4 };
        for (int i = 0; i < 12; i++)
            pp->bytes[pp->n++] = lb[i];
    }
    pp->bytes[pp->n++] = H * 4; /* final layer norm */
    pp->bytes[pp->n++] = H * 4;
    return 0;
}

/* One active step of training: forward, loss, backward, optimizer. */
/* The 12 activations a transformer layer's forward keeps for its backward. */
static void prog_layer_forward(prog *p, uint32_t sv[12])
{
    const uint64_t T = TOKENS, H = HIDDEN, bf = 2, f32 = 4;
    sv[0] = prog_ak(p, T * H * bf, K_LN);
    sv[1] = prog_ak(p, 3 * T * H * bf, K_GEMM_QKV);
    sv[2] = prog_ak(p, 3 * T * H * bf, K_ROPE);
    sv[3] = prog_alloc(p, T * HEADS * f32); /* softmax lse */
    sv[4] = prog_ak(p, T * H * bf, K_FLASH_FWD);
    sv[5] = prog_ak(p, T * H * bf, K_GEMM_PROJ);
    sv[6] = prog_ak(p, T * H * bf, K_ADD);
    sv[7] = prog_ak(p, T * H * bf, K_LN);
    sv[8] = prog_ak(p, 4 * T * H * bf, K_GEMM_FC1);
    sv[9] = prog_ak(p, 4 * T * H * bf, K_GELU);
    sv[10] = prog_ak(p, T * H * bf, K_GEMM_FC2);
    sv[11] = prog_ak(p, T * H * bf, K_ADD);
}

/* A layer's backward: its 12 gradients into g (b: their sizes), its saved
 * activations freed; returns the gradient of its input (gx is freed). */
static uint32_t prog_layer_backward(prog *p, const uint32_t sv[12], uint32_t g[12], const uint64_t *b, uint32_t gx)
{
    const uint64_t T = TOKENS, H = HIDDEN, bf = 2, f32 = 4;
    /* fc2 */
    uint32_t g_gelu = prog_ak(p, 4 * T * H * bf, K_GEMM_DGRAD);
    g[10] = prog_ak(p, b[10], K_GEMM_WGRAD);
    g[11] = prog_ak(p, b[11], K_REDUCE_SUM);
    prog_free(p, sv[10]);
    uint32_t g_fc1 = prog_ak(p, 4 * T * H * bf, K_GELU_BWD);
    prog_free(p, g_gelu);
    prog_free(p, sv[9]);
    uint32_t g_ln2 = prog_ak(p, T * H * bf, K_GEMM_DGRAD);
    g[8] = prog_ak(p, b[8], K_GEMM_WGRAD);
    g[9] = prog_ak(p, b[9], K_REDUCE_SUM);
    prog_free(p, g_fc1);
    prog_free(p, sv[8]);
    uint32_t g_r1 = prog_ak(p, T * H * bf, K_LN_BWD_IN);
    g[6] = prog_alloc(p, b[6]);
    g[7] = prog_alloc(p, b[7]);
    prog_kernel(p, K_LN_BWD_GB);
    prog_free(p, g_ln2);
    prog_free(p, sv[7]);
    uint32_t g_sum = prog_ak(p, T * H * bf, K_ADD);
    prog_free(p, g_r1);
    prog_free(p, sv[11]);
    prog_free(p, sv[6]);
    /* attention output projection */
    uint32_t g_attn = prog_ak(p, T * H * bf, K_GEMM_DGRAD);
    g[4] = prog_ak(p, b[4], K_GEMM_WGRAD);
    g[5] = prog_ak(p, b[5], K_REDUCE_SUM);
    prog_free(p, sv[5]);
    uint32_t dsum = prog_ak(p, T * HEADS * f32, K_FLASH_DOT);
    uint32_t dq_acc = prog_alloc(p, T * H * f32);
    uint32_t g_qkv = prog_ak(p, 3 * T * H * bf, K_FLASH_BWD);
    prog_kernel(p, K_FLASH_DQ);
    prog_free(p, dq_acc);
    prog_free(p, dsum);
    prog_free(p, g_attn);
    prog_free(p, sv[4]);
    prog_free(p, sv[3]);
    uint32_t g_rope = prog_ak(p, 3 * T * H * bf, K_ROPE);
    prog_free(p, g_qkv);
    prog_free(p, sv[2]);
    uint32_t g_ln1 = prog_ak(p, T * H * bf, K_GEMM_DGRAD);
    g[2] = prog_ak(p, b[2], K_GEMM_WGRAD);
    g[3] = prog_ak(p, b[3], K_REDUCE_SUM);
    prog_free(p, g_rope);
    prog_free(p, sv[1]);
    uint32_t g_in = prog_ak(p, T * H * bf, K_LN_BWD_IN);
    g[0] = prog_alloc(p, b[0]);
    g[1] = prog_alloc(p, b[1]);
    prog_kernel(p, K_LN_BWD_GB);
    prog_free(p, g_ln1);
    prog_free(p, sv[0]);
    uint32_t g_next = prog_ak(p, T * H * bf, K_ADD);
    prog_free(p, g_in);
    prog_free(p, g_sum);
    prog_free(p, gx);
    return g_next;
}

/* The optimizer step: gradient clipping and Adam, its temporaries freed. */
static void prog_optimizer(prog *p)
{
uint32_t norms = prog_ak(p, 320 * 4, K_LPNORM);
uint32_t total = prog_ak(p, 4, K_LPNORM_CLEANUP);
uint32_t coef = prog_ak(p, 4, K_MUL);
prog_kernel(p, K_FOREACH_MUL);
uint32_t steps_t = prog_alloc(p, 4);
prog_emit(p, OP_MEMSET, 0, steps_t, 4);
for (unsigned i = 0; i < 4; i++)
    prog_kernel(p, K_ADAM);
prog_free(p, steps_t);
prog_free(p, coef);
prog_free(p, total);
prog_free(p, norms);
}

static void prog_build(prog *p, unsigned layers, const params *pp)
{
    const uint64_t T = TOKENS, H = HIDDEN, bf = 2, f32 = 4;
    uint32_t *saved = malloc(sizeof(uint32_t) * layers * 12u);
    uint32_t *grads = malloc(sizeof(uint32_t) * (pp->n + 1u));
    if (!saved || !grads) {
        p->err = 1;
        free(saved);
        free(grads);
        return;
    }
    prog_emit(p, OP_TAG, N_TAG_STEP_BEGIN, 0, 0);
    /* input batch: pinned host -> device copy into a fresh buffer */
    uint32_t tokens = prog_alloc(p, T * 8);
    prog_emit(p, OP_MEMCPY, 0, tokens, T * 8);
    uint32_t labels = prog_alloc(p, T * 8);
    prog_emit(p, OP_MEMCPY, 0, labels, T * 8);

    prog_push(p, N_FORWARD);
    uint32_t x = prog_ak(p, T * H * bf, K_EMB);
    uint32_t xin = x;
    for (unsigned l = 0; l < layers; l++) {
        uint32_t *sv = saved + l * 12u;
        prog_push(p, N_LAYER0 + (int)l);
        prog_layer_forward(p, sv);
        prog_pop(p);
    }
    uint32_t lnf = prog_ak(p, T * H * bf, K_LN);
    uint32_t logits = prog_ak(p, T * VOCAB * bf, K_GEMM_LMHEAD);
    prog_pop(p);

    prog_push(p, N_LOSS);
    uint32_t logp = prog_ak(p, T * VOCAB * f32, K_LOGSOFTMAX);
    uint32_t loss = prog_ak(p, 4, K_NLL);
    uint32_t tw = prog_ak(p, 4, K_SUM_F32);
    prog_pop(p);

    prog_push(p, N_BACKWARD);
    uint32_t gl = prog_ak(p, 4, K_FILL);
    uint32_t glogp = prog_ak(p, T * VOCAB * f32, K_NLL_BWD);
    uint32_t glogits = prog_ak(p, T * VOCAB * bf, K_LOGSOFTMAX_BWD);
    prog_free(p, glogp);
    prog_free(p, logp);
    prog_free(p, gl);
    uint32_t gx = prog_ak(p, T * H * bf, K_GEMM_DGRAD);
    grads[0] = prog_ak(p, pp->bytes[0], K_GEMM_WGRAD);
    prog_free(p, glogits);
    prog_free(p, logits);
    uint32_t gx2 = prog_ak(p, T * H * bf, K_LN_BWD_IN);
    grads[pp->n - 2] = prog_alloc(p, pp->bytes[pp->n - 2]);
    grads[pp->n - 1] = prog_alloc(p, pp->bytes[pp->n - 1]);
    prog_kernel(p, K_LN_BWD_GB);
    prog_free(p, gx);
    prog_free(p, lnf);
    gx = gx2;
    for (unsigned li = layers; li-- > 0;) {
        uint32_t *sv = saved + li * 12u;
        uint32_t *g = grads + 2 + li * 12u;
        prog_push(p, N_LAYER0 + (int)li);
        gx = prog_layer_backward(p, sv, g, pp->bytes + 2 + li * 12u, gx);
        prog_pop(p);
    }
    uint32_t sorted = prog_ak(p, T * 16, K_RADIX_SORT);
    uint32_t gemb = prog_ak(p, pp->bytes[0], K_EMB_BWD);
    prog_kernel(p, K_ADD); /* tied embedding: accumulate into the lm head grad */
    prog_free(p, gemb);
    grads[1] = prog_ak(p, pp->bytes[1], K_REDUCE_SUM);
    prog_free(p, sorted);
    prog_free(p, gx);
    prog_free(p, xin);
    prog_free(p, loss);
    prog_free(p, tw);
    prog_pop(p);

    prog_push(p, N_OPTIMIZER);
    prog_optimizer(p);
    prog_pop(p);
    /* zero_grad(set_to_none=True): every gradient goes back to the pool */
    for (uint32_t i = 0; i < pp->n; i++)
        prog_free(p, grads[i]);
    prog_free(p, tokens);
    prog_free(p, labels);
    prog_emit(p, OP_TAG, N_TAG_AFTER_OPT, 0, 0);
    free(saved);
    free(grads);
}

/* ---- the pool: exact sizes, lowest free address first -------------------- */

typedef struct sizeclass {
    uint64_t bytes;
    uint64_t *free_addr;
    uint32_t nfree, cap;
} sizeclass;

typedef struct pool {
    sizeclass *cls;
    uint32_t ncls;
    uint32_t *slot_cls; /* slot -> size class */
    uint64_t bump;
    int err;
} pool;

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static int pool_build(pool *pl, const prog *p)
{
    pl->bump = POOL_BASE;
    pl->slot_cls = calloc(p->nslots ? p->nslots : 1, sizeof(uint32_t));
    pl->cls = calloc(p->nslots ? p->nslots : 1, sizeof(sizeclass));
    if (!pl->slot_cls || !pl->cls)
        return -1;
    for (uint32_t s = 0; s < p->nslots; s++) {
        uint64_t b = p->slot_bytes[s];
        uint32_t c = 0;
        while (c < pl->ncls && pl->cls[c].bytes != b)
            c++;
        if (c == pl->ncls)
            pl->cls[pl->ncls++].bytes = b;
        pl->slot_cls[s] = c;
    }
    return 0;
}

/* Best fit, lowest address first, as PyTorch's caching allocator orders its
 * free blocks (size, then address): with exact sizes that is a min-heap of
 * addresses per size, and a steady training loop gets the same addresses
 * every step, as real ones do. */
static uint64_t pool_get(pool *pl, uint32_t c, uint64_t bytes)
{
    sizeclass *k = &pl->cls[c];
    if (k->nfree) {
        uint64_t *h = k->free_addr;
        uint64_t top = h[0];
        uint64_t last = h[--k->nfree];
        uint32_t i = 0, n = k->nfree;
        for (;;) {
            uint32_t l = 2 * i + 1, m = i;
            if (l >= n)
                break;
            m = (l + 1 < n && h[l + 1] < h[l]) ? l + 1 : l;
            if (h[m] >= last)
                break;
            h[i] = h[m];
            i = m;
        }
        if (n)
            h[i] = last;
        return top;
    }
    uint64_t a = pl->bump;
    pl->bump += round_up(bytes, bytes >= (1u << 20) ? (2u << 20) : POOL_ALIGN);
    return a;
}

static void pool_put(pool *pl, uint32_t c, uint64_t addr)
{
    sizeclass *k = &pl->cls[c];
    if (k->nfree == k->cap) {
        uint32_t nc = k->cap ? k->cap * 2 : 8;
        uint64_t *na = realloc(k->free_addr, nc * sizeof(uint64_t));
        if (!na) {
            pl->err = 1;
            return;
        }
        k->free_addr = na;
        k->cap = nc;
    }
    uint64_t *h = k->free_addr;
    uint32_t i = k->nfree++;
    while (i > 0 && h[(i - 1) / 2] > addr) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = addr;
}

static void pool_release(pool *pl)
{
    for (uint32_t c = 0; c < pl->ncls; c++)
        free(pl->cls[c].free_addr);
    free(pl->cls);
    free(pl->slot_cls);
}

/* ---- generator state ---------------------------------------------------- */

typedef struct gen {
    const gmt_synth_opts *o;
    uint64_t dev;        /* the device: the rank's (rank % 8), else 0 */
    uint64_t extra_addr, extra_bytes, extra_ts, extra_corr; /* the rank's own buffer, 0 bytes: none */
    uint8_t next_src;    /* source of the next memory record, 0: the pool */
    gmt_synth_sink sink;
    void *ctx;
    gmt_synth_summary *sum;
    gmt_status st;
    int stop;            /* event budget reached */
    uint64_t rng;
    gmt_record rec;      /* reused for every record; never copied */
    /* clocks */
    uint64_t host_t;
    uint64_t gpu_t;
    uint64_t last_edge_t;
    uint64_t next_sample_t;
    /* ids */
    uint64_t corr;
    uint64_t seq;        /* launches on the main thread so far */
    uint64_t range_id;
    uint64_t step;
    uint64_t window;
    int in_window;
    /* interned names: 0 until first use */
    uint64_t kname[K_COUNT_];
    uint64_t *nname;     /* N_FIXED_ + layers */
    uint64_t next_string;
    /* NVTX stack */
    uint64_t rstack[8];
    int rdepth;
    /* memory */
    uint64_t *slot_addr;
    uint64_t live;       /* device bytes live, baseline included */
    params pp;
    uint64_t *param_addr; /* 3 x pp.n: weights, exp_avg, exp_avg_sq */
    uint64_t *param_ts;
    uint64_t *param_corr;
    uint64_t *param_seq;
    uint64_t baseline_bytes;
    prog prog;
    pool pool;
} gen;

static inline uint64_t rnd(gen *g)
{
    /* xorshift64*: deterministic, fast, good enough for timing jitter */
    uint64_t x = g->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    g->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* base +- pct % of base */
static inline uint64_t jitter(gen *g, uint64_t base, unsigned pct)
{
    uint64_t span = base * pct / 100;
    if (!span)
        return base;
    return base - span + rnd(g) % (2 * span + 1);
}

static inline void emit(gen *g)
{
    if (g->st != GMT_OK)
        return;
    gmt_synth_summary *s = g->sum;
    s->records++;
    s->by_type[g->rec.type]++;
    if (g->sink)
        g->st = g->sink(g->ctx, &g->rec);
    if (g->o->events && s->records >= g->o->events)
        g->stop = 1;
}

static void frame_edge(gen *g, uint64_t now)
{
    if (g->st != GMT_OK)
        return;
    g->last_edge_t = now;
    g->sum->frame_edges++;
    if (g->sink)
        g->st = g->sink(g->ctx, NULL);
}

/* A frame at least once per second of trace time, as the profiler does. */
static inline void maybe_edge(gen *g, uint64_t now)
{
    if (now - g->last_edge_t >= FRAME_PERIOD_NS)
        frame_edge(g, now);
}

static uint64_t intern(gen *g, uint64_t *slot, const char *s, size_t len)
{
    if (*slot)
        return *slot;
    *slot = ++g->next_string;
    gmt_record *r = &g->rec;
    r->type = GMT_REC_STRING;
    r->u.string.id = *slot;
    r->u.string.str.ptr = s;
    r->u.string.str.len = (uint32_t)len;
    emit(g);
    return *slot;
}

static uint64_t name_id(gen *g, int n)
{
    static const char *const fixed[N_LAYER0] = { "forward", "backward", "optimizer", "loss", "tag:step_begin",
                                                 "tag:after_optimizer" };
    if (g->nname[n])
        return g->nname[n];
    char buf[32];
    const char *s = buf;
    if (n < N_LAYER0)
        s = fixed[n];
    else
        snprintf(buf, sizeof(buf), "layers.%d", n - N_LAYER0);
    return intern(g, &g->nname[n], s, strlen(s));
}

static void mem_record(gen *g, gmt_type type, uint64_t ts, uint64_t addr, uint64_t bytes, uint64_t flags,
                       uint64_t corr, uint64_t seq, uint64_t range)
{
    gmt_record *r = &g->rec;
    r->type = type;
    gmt_mem *m = &r->u.mem;
    m->ts = ts;
    m->device = g->dev;
    m->address = addr;
    m->bytes = bytes;
    m->kind = GMT_MEMKIND_DEVICE;
    m->source = g->next_src ? g->next_src : GMT_SRC_ASYNC_POOL;
    g->next_src = 0;
    m->flags = flags;
    m->corr = corr;
    m->stream = STREAM_MAIN;
    m->tid = TID_MAIN;
    m->range = range;
    m->seq = seq;
    m->step = g->step;
    emit(g);
}

static void note_live(gen *g)
{
    if (g->live > g->sum->peak_live_bytes) {
        g->sum->peak_live_bytes = g->live;
        g->sum->peak_step = g->step;
    }
}

static void memsample(gen *g, uint64_t ts)
{
    gmt_record *r = &g->rec;
    r->type = GMT_REC_MEMSAMPLE;
    uint64_t used = g->live + CONTEXT_BYTES + (g->pool.bump - POOL_BASE - g->live) / 4;
    r->u.sample.ts = ts;
    r->u.sample.device = g->dev;
    r->u.sample.used = used;
    r->u.sample.free_ = DEVICE_TOTAL - used;
    r->u.sample.total = DEVICE_TOTAL;
    emit(g);
}

static void tag(gen *g, int n)
{
    uint64_t id = name_id(g, n);
    gmt_record *r = &g->rec;
    r->type = GMT_REC_TAG;
    gmt_tag *t = &r->u.tag;
    g->host_t += jitter(g, 900, 20);
    uint64_t used = g->live + CONTEXT_BYTES;
    t->ts = g->host_t;
    t->name = id;
    t->step = g->step;
    t->ndev = 1;
    t->dev[0].device = g->dev;
    t->dev[0].live_bytes = g->live;
    t->dev[0].driver_used = used;
    t->dev[0].driver_free = DEVICE_TOTAL - used;
    t->dev[0].driver_total = DEVICE_TOTAL;
    emit(g);
}

static void stats(gen *g, uint64_t ts)
{
    gmt_record *r = &g->rec;
    r->type = GMT_REC_STATS;
    gmt_stats *s = &r->u.stats;
    s->ts = ts;
    s->records_written = g->sum->records;
    s->dropped_cupti = 0;
    s->dropped_writer = 0;
    s->host_time_ns = g->sum->records * 35; /* ~35 ns of profiler time per record */
    s->own_device_bytes = 3u << 20;
    s->own_host_bytes = 9u << 20;
    s->bytes_written = g->sum->records * 3;
    s->unmatched_corr = 0;
    emit(g);
}

static void step_record(gen *g, uint64_t phase)
{
    gmt_record *r = &g->rec;
    r->type = GMT_REC_STEP;
    r->u.step.ts = g->host_t;
    r->u.step.step = g->step;
    r->u.step.phase = phase;
    r->u.step.source = GMT_STEPSRC_API;
    g->sum->steps++;
    emit(g);
}

static void window_begin(gen *g)
{
    frame_edge(g, g->host_t);
    gmt_record *r = &g->rec;
    r->type = GMT_REC_WINDOW_BEGIN;
    r->u.wbegin.ts = g->host_t;
    r->u.wbegin.window = g->window;
    r->u.wbegin.step = g->step;
    r->u.wbegin.baseline_count = 3u * g->pp.n + (g->extra_bytes ? 1u : 0u);
    r->u.wbegin.baseline_bytes = g->baseline_bytes;
    g->sum->windows++;
    if (g->sum->windows == 1)
        g->sum->baseline_bytes = g->baseline_bytes;
    emit(g);
    /* The baseline repeats each allocation as it was made: before step 0. */
    uint64_t step = g->step;
    g->step = 0;
    for (uint32_t i = 0; i < 3u * g->pp.n && g->st == GMT_OK; i++)
        mem_record(g, GMT_REC_ALLOC, g->param_ts[i], g->param_addr[i], g->pp.bytes[i % g->pp.n],
                   GMT_MEMF_BASELINE, g->param_corr[i], g->param_seq[i], 0);
    if (g->extra_bytes && g->st == GMT_OK) {
        g->next_src = GMT_SRC_MALLOC;
        mem_record(g, GMT_REC_ALLOC, g->extra_ts, g->extra_addr, g->extra_bytes, GMT_MEMF_BASELINE, g->extra_corr, 0, 0);
    }
    g->step = step;
    g->in_window = 1;
    g->next_sample_t = g->gpu_t > g->host_t ? g->gpu_t : g->host_t;
}

static void window_end(gen *g, uint64_t reason)
{
    uint64_t ts = g->gpu_t > g->host_t ? g->gpu_t : g->host_t;
    gmt_record *r = &g->rec;
    r->type = GMT_REC_WINDOW_END;
    r->u.wend.ts = ts;
    r->u.wend.window = g->window;
    r->u.wend.step = g->step;
    r->u.wend.reason = reason;
    emit(g);
    stats(g, ts);
    frame_edge(g, ts);
    g->in_window = 0;
    g->window++;
}

/* Replays the step program with fresh timing and ids. */
static void run_step(gen *g)
{
    const prog *p = &g->prog;
    uint64_t innermost = 0;
    for (size_t i = 0; i < p->n && !g->stop && g->st == GMT_OK; i++) {
        const op *o = &p->ops[i];
        switch (o->code) {
        case OP_ALLOC: {
            g->host_t += jitter(g, 1400, 25);
            uint64_t a = pool_get(&g->pool, g->pool.slot_cls[o->slot], o->bytes);
            g->slot_addr[o->slot] = a;
            g->live += o->bytes;
            g->sum->alloc_bytes += o->bytes;
            note_live(g);
            mem_record(g, GMT_REC_ALLOC, g->host_t, a, o->bytes, 0, ++g->corr, g->seq, innermost);
            break;
        }
        case OP_FREE: {
            g->host_t += jitter(g, 900, 25);
            uint64_t b = g->prog.slot_bytes[o->slot];
            uint64_t a = g->slot_addr[o->slot];
            pool_put(&g->pool, g->pool.slot_cls[o->slot], a);
            g->live -= b;
            g->sum->free_bytes += b;
            mem_record(g, GMT_REC_FREE, g->host_t, a, b, 0, ++g->corr, g->seq, innermost);
            break;
        }
        case OP_KERNEL: {
            const kdef *k = &KERNELS[o->arg];
            uint64_t name = intern(g, &g->kname[o->arg], k->name, strlen(k->name));
            g->host_t += jitter(g, 4200, 20);
            /* GPU-bound loop: the kernel starts when the stream is free,
             * never before the launch reaches the GPU; 32 ns timer ticks. */
            uint64_t ready = g->host_t + 2600;
            uint64_t start = (g->gpu_t > ready ? g->gpu_t : ready) & ~31ull;
            uint64_t dur = jitter(g, (uint64_t)k->us * 1000u, 2) & ~31ull;
            if (!dur)
                dur = 32;
            g->gpu_t = start + dur + 1024 + (rnd(g) & 0x3e0);
            gmt_record *r = &g->rec;
            r->type = GMT_REC_KERNEL;
            gmt_kernel *kr = &r->u.kernel;
            kr->start = start;
            kr->end = start + dur;
            kr->device = g->dev;
            kr->stream = STREAM_MAIN;
            kr->corr = ++g->corr;
            kr->name = name;
            for (int d = 0; d < 3; d++) {
                kr->grid[d] = k->grid[d];
                kr->block[d] = k->block[d];
            }
            kr->registers = k->regs;
            kr->static_smem = k->smem;
            kr->dynamic_smem = k->dsmem;
            kr->local_mem = 0;
            kr->tid = TID_MAIN;
            kr->seq = ++g->seq;
            kr->range = innermost;
            kr->step = g->step;
            emit(g);
            if (g->in_window && start + dur >= g->next_sample_t) {
                memsample(g, start + dur);
                g->next_sample_t += SAMPLE_PERIOD_NS;
                if (g->next_sample_t < start + dur)
                    g->next_sample_t = start + dur + SAMPLE_PERIOD_NS;
            }
            break;
        }
        case OP_PUSH: {
            uint64_t name = name_id(g, o->arg);
            g->host_t += jitter(g, 300, 30);
            gmt_record *r = &g->rec;
            r->type = GMT_REC_RANGE_BEGIN;
            r->u.range.ts = g->host_t;
            r->u.range.tid = TID_MAIN;
            r->u.range.id = ++g->range_id;
            r->u.range.parent = innermost;
            r->u.range.name = name;
            if (g->rdepth < 8)
                g->rstack[g->rdepth] = g->range_id;
            g->rdepth++;
            innermost = g->range_id;
            emit(g);
            break;
        }
        case OP_POP: {
            g->host_t += jitter(g, 250, 30);
            gmt_record *r = &g->rec;
            r->type = GMT_REC_RANGE_END;
            r->u.range.ts = g->host_t;
            r->u.range.tid = TID_MAIN;
            r->u.range.id = innermost;
            r->u.range.parent = 0;
            r->u.range.name = 0;
            g->rdepth--;
            innermost = g->rdepth > 0 && g->rdepth <= 8 ? g->rstack[g->rdepth - 1] : 0;
            emit(g);
            break;
        }
        case OP_MEMCPY:
        case OP_MEMSET: {
            g->host_t += jitter(g, 3800, 20);
            uint64_t ready = g->host_t + 2000;
            uint64_t start = (g->gpu_t > ready ? g->gpu_t : ready) & ~31ull;
            /* ~25 GB/s for a pinned host copy; memsets are tiny */
            uint64_t dur = (o->code == OP_MEMCPY ? jitter(g, o->bytes / 25 + 1500, 3) : jitter(g, 1600, 3)) & ~31ull;
            g->gpu_t = start + dur + 1024;
            gmt_record *r = &g->rec;
            r->type = o->code == OP_MEMCPY ? GMT_REC_MEMCPY : GMT_REC_MEMSET;
            gmt_copy *c = &r->u.copy;
            c->start = start;
            c->end = start + dur;
            c->device = g->dev;
            c->stream = STREAM_MAIN;
            c->corr = ++g->corr;
            c->bytes = o->bytes;
            c->copy_kind = o->code == OP_MEMCPY ? GMT_COPY_HTOD : 0;
            c->src_kind = o->code == OP_MEMCPY ? GMT_MEMKIND_PINNED : GMT_MEMKIND_DEVICE;
            c->dst_kind = o->code == OP_MEMCPY ? GMT_MEMKIND_DEVICE : 0;
            c->tid = TID_MAIN;
            c->step = g->step;
            emit(g);
            break;
        }
        case OP_TAG:
            tag(g, o->arg);
            break;
        }
        maybe_edge(g, g->host_t);
    }
    /* loss.item(): the host waits for the GPU at the end of the step */
    if (g->gpu_t > g->host_t)
        g->host_t = g->gpu_t;
    g->host_t += jitter(g, 60000, 20);
}

/* A step outside the window: the program runs but nothing is recorded
 * beyond the STEP record; its timing still advances the clocks. */
static void idle_step(gen *g, uint64_t phase)
{
    step_record(g, phase);
    g->host_t += jitter(g, 150000000, 5);
    g->gpu_t = g->host_t;
    maybe_edge(g, g->host_t);
}

/* Weights and AdamW state, allocated once before profiling windows. */
static void setup_params(gen *g)
{
    uint32_t n = 3u * g->pp.n;
    for (uint32_t i = 0; i < n; i++) {
        g->host_t += jitter(g, 9000, 20);
        uint64_t b = g->pp.bytes[i % g->pp.n];
        g->param_addr[i] = g->pool.bump;
        g->pool.bump += round_up(b, b >= (1u << 20) ? (2u << 20) : POOL_ALIGN);
        g->param_ts[i] = g->host_t;
        g->param_corr[i] = ++g->corr;
        g->param_seq[i] = g->seq;
        g->baseline_bytes += b;
        if (i % 50 == 49) {
            g->seq++; /* an init kernel now and then (not recorded: no window) */
            g->corr++;
        }
    }
    if (g->o->has_rank) {
        /* What NCCL allocates for itself, with cudaMalloc outside PyTorch's
         * pool: a size that differs per rank, so that the ranks' peaks and
         * a merge across ranks are not all the same. */
        g->host_t += jitter(g, 9000, 20);
        g->extra_bytes = (g->o->rank % 8 + 1) * (8ull << 20);
        g->extra_addr = g->pool.bump;
        g->pool.bump += round_up(g->extra_bytes, 2u << 20);
        g->extra_ts = g->host_t;
        g->extra_corr = ++g->corr;
        g->baseline_bytes += g->extra_bytes;
    }
    g->live = g->baseline_bytes;
    note_live(g);
}

void gmt_synth_opts_default(gmt_synth_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->events = 1000000;
    o->seed = 1;
    o->wait = 1;
    o->warmup = 1;
    o->active = 3;
    o->layers = 12;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

gmt_status gmt_synth_run(const gmt_synth_opts *in, gmt_synth_sink sink, void *ctx, gmt_synth_summary *sum_out)
{
    gmt_synth_summary local;
    gmt_synth_summary *sum = sum_out ? sum_out : &local;
    memset(sum, 0, sizeof(*sum));
    double t0 = now_s();
    if (!in || (!in->events && !in->steps) || in->layers > 256)
        return GMT_E_ARG;
    if (in->has_rank && in->world_size && in->rank >= in->world_size)
        return GMT_E_ARG;
    gmt_synth_opts o = *in;
    if (!o.wait && !o.warmup && !o.active) {
        o.wait = 1;
        o.warmup = 1;
        o.active = 3;
    }
    if (!o.active)
        return GMT_E_ARG;
    if (!o.layers)
        o.layers = 12;

    gen *g = calloc(1, sizeof(*g));
    if (!g)
        return GMT_E_NOMEM;
    g->o = &o;
    g->dev = o.has_rank ? o.rank % 8 : 0;
    g->sink = sink;
    g->ctx = ctx;
    g->sum = sum;
    g->st = GMT_OK;
    g->rng = o.seed * 0x9e3779b97f4a7c15ull + 0x6a09e667f3bcc909ull;
    if (!g->rng)
        g->rng = 1;
    gmt_status st = GMT_E_NOMEM;
    g->nname = calloc(N_LAYER0 + o.layers, sizeof(uint64_t));
    if (!g->nname || params_build(&g->pp, o.layers) != 0)
        goto out;
    prog_build(&g->prog, o.layers, &g->pp);
    if (g->prog.err || pool_build(&g->pool, &g->prog) != 0)
        goto out;
    g->slot_addr = calloc(g->prog.nslots, sizeof(uint64_t));
    g->param_addr = calloc(3u * g->pp.n, sizeof(uint64_t));
    g->param_ts = calloc(3u * g->pp.n, sizeof(uint64_t));
    g->param_corr = calloc(3u * g->pp.n, sizeof(uint64_t));
    g->param_seq = calloc(3u * g->pp.n, sizeof(uint64_t));
    if (!g->slot_addr || !g->param_addr || !g->param_ts || !g->param_corr || !g->param_seq)
        goto out;

    /* A CUPTI-like clock: large absolute ns values. */
    g->host_t = 1718000000000000000ull + (rnd(g) % 1000000000ull);
    g->gpu_t = g->host_t;
    g->last_edge_t = g->host_t;
    sum->first_ts = g->host_t;

    gmt_record *r = &g->rec;
    r->type = GMT_REC_HEADER;
    gmt_header *h = &r->u.header;
    static const char host[] = "synth-node-01";
    static const char cmd[] = "python train.py --model gpt2 --batch-size 8 --seq-len 1024 --bf16";
    static const char ver[] = "gmem-synth " GMEMPROF_VERSION;
    char cfg[160];
    snprintf(cfg, sizeof(cfg), "schedule=wait=%u,warmup=%u,active=%u;kernels=1;zstd_level=3;synthetic=1;seed=%llu",
             o.wait, o.warmup, o.active, (unsigned long long)o.seed);
    h->ppid = 31300;
    h->start_unix_ns = 1718000000000000000ull;
    h->start_ts = g->host_t;
    h->rank = o.has_rank ? (int64_t)o.rank : -1;
    h->local_rank = o.has_rank ? (int64_t)(o.rank % 8) : -1; /* 8 GPUs a node */
    h->world_size = o.world_size ? (int64_t)o.world_size : -1;
    h->pid = 31337 + (o.has_rank ? o.rank : 0);
    h->cupti_version = 26;
    h->driver_version = 13000;
    h->flags = 0;
    h->host = (gmt_bytes){ host, (uint32_t)strlen(host) };
    h->cmdline = (gmt_bytes){ cmd, (uint32_t)strlen(cmd) };
    h->config = (gmt_bytes){ cfg, (uint32_t)strlen(cfg) };
    h->profiler_version = (gmt_bytes){ ver, (uint32_t)strlen(ver) };
    emit(g);

    static const char devname[] = "NVIDIA H200";
    r->type = GMT_REC_DEVICE;
    gmt_device *d = &r->u.device;
    d->device = g->dev;
    d->total_mem = DEVICE_TOTAL;
    d->sm_count = 132;
    d->cc_major = 9;
    d->cc_minor = 0;
    for (int i = 0; i < 16; i++)
        d->uuid[i] = (uint8_t)(rnd(g) >> 56);
    d->name = (gmt_bytes){ devname, (uint32_t)strlen(devname) };
    emit(g);

    setup_params(g);

    unsigned cycle = o.wait + o.warmup + o.active;
    while (!g->stop && g->st == GMT_OK && g->pool.err == 0) {
        if (o.steps && g->step >= o.steps)
            break;
        unsigned pos = (unsigned)(g->step % cycle);
        if (pos < o.wait) {
            idle_step(g, GMT_PHASE_WAIT);
        } else if (pos < o.wait + o.warmup) {
            idle_step(g, GMT_PHASE_WARMUP);
        } else {
            if (pos == o.wait + o.warmup)
                window_begin(g);
            step_record(g, GMT_PHASE_ACTIVE);
            if (!g->stop)
                run_step(g);
            if (pos == cycle - 1 && !g->stop)
                window_end(g, GMT_WEND_SCHEDULE);
        }
        g->step++;
    }
    if (g->step > 0)
        g->step--; /* the last step that ran */
    if (g->pool.err && g->st == GMT_OK)
        g->st = GMT_E_NOMEM;
    if (g->st == GMT_OK) {
        /* Ran out of budget: end as a process exiting inside the window. */
        g->stop = 0;
        if (g->in_window)
            window_end(g, GMT_WEND_EXIT);
        uint64_t ts = (g->gpu_t > g->host_t ? g->gpu_t : g->host_t) + 50000;
        stats(g, ts);
        r->type = GMT_REC_TRAILER;
        r->u.trailer.ts = ts;
        r->u.trailer.records = sum->records;
        r->u.trailer.status = GMT_TRAILER_CLEAN;
        emit(g);
        sum->last_ts = ts;
    }
    st = g->st;
out:
    if (g->prog.ops || g->prog.slot_bytes) {
        free(g->prog.ops);
        free(g->prog.slot_bytes);
    }
    pool_release(&g->pool);
    free(g->slot_addr);
    free(g->param_addr);
    free(g->param_ts);
    free(g->param_corr);
    free(g->param_seq);
    free(g->pp.bytes);
    free(g->nname);
    free(g);
    sum->gen_seconds = now_s() - t0;
    return st;
}

/* ---- writing ------------------------------------------------------------ */

static gmt_status writer_sink(void *ctx, const gmt_record *r)
{
    gmt_writer *w = ctx;
    return r ? gmt_writer_put(w, r) : gmt_writer_end_frame(w);
}

gmt_status gmt_synth_to_writer(const gmt_synth_opts *o, gmt_writer *w, gmt_synth_summary *sum)
{
    if (!w)
        return GMT_E_ARG;
    return gmt_synth_run(o, writer_sink, w, sum);
}

gmt_status gmt_synth_write(const char *path, const gmt_synth_opts *o, const gmt_writer_opts *wo,
                           gmt_synth_summary *sum)
{
    gmt_synth_summary local;
    if (!sum)
        sum = &local;
    double t0 = now_s();
    gmt_writer *w = gmt_writer_open(path, wo);
    if (!w) {
        memset(sum, 0, sizeof(*sum));
        return errno == ENOMEM ? GMT_E_NOMEM : GMT_E_IO;
    }
    gmt_status st = gmt_synth_to_writer(o, w, sum);
    gmt_writer_end_frame(w);
    sum->bytes_in = gmt_writer_bytes_in(w);
    sum->bytes_out = gmt_writer_bytes_out(w);
    sum->frames = gmt_writer_frames(w);
    gmt_status cst = gmt_writer_close(w);
    sum->gen_seconds = now_s() - t0;
    return st != GMT_OK ? st : cst;
}
