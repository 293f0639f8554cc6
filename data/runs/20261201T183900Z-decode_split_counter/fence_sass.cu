// What the split counter's three orderings compile to on sm_90a (SASS in fence_sass.txt): k1 the committed
// __threadfence() in every thread then atomicInc; k2 one atom.acq_rel by thread 0 after the barrier (count_in.diff);
// k3 fence.acq_rel then a relaxed atomic (fence_acq_rel.diff uses that fence in place of __threadfence).
extern "C" __global__ void k1(float* a, unsigned* c, int* o){ a[threadIdx.x]=1.f; __threadfence(); __syncthreads(); if(threadIdx.x==0) o[0]=atomicInc(c,15); }
extern "C" __global__ void k2(float* a, unsigned* c, int* o){ a[threadIdx.x]=1.f; __syncthreads(); if(threadIdx.x==0){unsigned r; asm volatile("atom.acq_rel.gpu.global.inc.u32 %0,[%1],15;":"=r"(r):"l"(c):"memory"); o[0]=r;} }
extern "C" __global__ void k3(float* a, unsigned* c, int* o){ a[threadIdx.x]=1.f; __syncthreads(); if(threadIdx.x==0){unsigned r; asm volatile("fence.acq_rel.gpu;\n atom.global.inc.u32 %0,[%1],15;":"=r"(r):"l"(c):"memory"); o[0]=r;} }
