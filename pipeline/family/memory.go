package family

import "regexp"

// commonMemoryEvidence are the out-of-memory texts of the layers every
// family runs on: CUDA and HIP ("CUDA out of memory", "cudaMalloc failed:
// out of memory", "hipErrorOutOfMemory"), PyTorch (torch.OutOfMemoryError),
// cuBLAS, C++ and libc allocation failures, the kernel's OOM killer as a
// wrapper relays it. Each family's file adds its own.
var commonMemoryEvidence = []*regexp.Regexp{
	regexp.MustCompile(`(?i)out of memory`),
	regexp.MustCompile(`(?i)outofmemory`),
	regexp.MustCompile(`(?i)cudaErrorMemoryAllocation`),
	regexp.MustCompile(`(?i)CUBLAS_STATUS_ALLOC_FAILED`),
	regexp.MustCompile(`std::bad_alloc`),
	regexp.MustCompile(`(?i)cannot allocate memory`),
	regexp.MustCompile(`(?i)oom-kill`),
}

// MemoryText returns the first of the family's memory evidence that text
// carries, and the match; "" when none does.
func (f *Family) MemoryText(text string) string {
	for _, re := range f.MemoryEvidence {
		if m := re.FindString(text); m != "" {
			return m
		}
	}
	return ""
}
