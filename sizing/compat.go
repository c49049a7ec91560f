package sizing

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The answers of a compatibility check.
const (
	Yes     = "yes"
	No      = "no"
	Partial = "partial" // runs, with a restriction the note names
	Unknown = "unknown" // the card's compute capability is not known
)

// Support is whether a card runs one format or kernel, with why.
type Support struct {
	Feature string `json:"feature"`
	Status  string `json:"status"` // Yes, No, Partial or Unknown
	Note    string `json:"note,omitempty"`
}

// capability is a compute capability as major×10 + minor (8.9 → 89); 0 when unknown.
func (g GPU) capability() int {
	major, minor, ok := strings.Cut(g.ComputeCapability, ".")
	if !ok {
		return 0
	}
	a, err1 := strconv.Atoi(major)
	b, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return 0
	}
	return a*10 + b
}

// WeightSupport says whether a card runs weights of precision p, by its
// compute capability: bf16 needs Ampere (8.0); fp8 tensor cores need Ada or
// Hopper (8.9); before that engines run fp8 checkpoints weight-only (FP8
// Marlin) with 16-bit compute; int4 kernels (Marlin, Machete) need 8.0;
// int8 (W8A8) needs Turing (7.5); fp4 (NVFP4) needs Blackwell (10.0).
func WeightSupport(g GPU, p Precision) Support {
	s := Support{Feature: "weights " + string(p)}
	cc := g.capability()
	if cc == 0 {
		s.Status, s.Note = Unknown, "compute capability unknown: check the card's datasheet"
		return s
	}
	switch p {
	case BF16:
		s.Status, s.Note = atLeast(cc, 80, "bf16 needs compute capability 8.0 (Ampere)")
	case FP16:
		s.Status, s.Note = atLeast(cc, 70, "fp16 tensor cores need 7.0 (Volta)")
	case FP8:
		s.Status, s.Note = atLeast(cc, 89, "fp8 tensor cores need 8.9 (Ada) or 9.0 (Hopper)")
		if s.Status == No && cc >= 80 {
			s.Status, s.Note = Partial, "no fp8 tensor cores: weight-only (FP8 Marlin), computed in 16 bits"
		}
	case INT8:
		s.Status, s.Note = atLeast(cc, 75, "int8 W8A8 kernels need 7.5 (Turing)")
	case INT4:
		s.Status, s.Note = atLeast(cc, 80, "int4 kernels (Marlin, Machete) need 8.0 (Ampere)")
	case FP4:
		s.Status, s.Note = atLeast(cc, 100, "fp4 (NVFP4) tensor cores need 10.0 (Blackwell)")
	default:
		s.Status, s.Note = Unknown, "precision not in the table"
	}
	return s
}

// KVSupport says whether a card runs a KV cache of precision p: an fp8 KV
// cache is read by fp8 attention kernels from 8.9 on; on Ampere it is
// stored in fp8 and dequantised inside the attention kernel, which only
// some backends do.
func KVSupport(g GPU, p Precision) Support {
	s := Support{Feature: "KV " + string(p)}
	cc := g.capability()
	switch {
	case cc == 0:
		s.Status, s.Note = Unknown, "compute capability unknown: check the card's datasheet"
	case p == FP8 && cc >= 89:
		s.Status = Yes
	case p == FP8 && cc >= 80:
		s.Status, s.Note = Partial, "fp8 KV stored, dequantised in the attention kernel: backend-dependent (FlashInfer, not FlashAttention-2)"
	case p == FP8:
		s.Status, s.Note = No, "fp8 KV needs 8.0 at least"
	case p == BF16:
		s.Status, s.Note = atLeast(cc, 80, "bf16 needs compute capability 8.0 (Ampere)")
	default:
		s.Status = Yes
	}
	return s
}

// AttentionSupport says whether a card runs FlashAttention-2 (Ampere, Ada
// and Hopper: 8.0 to 9.0) and FlashAttention-3 (Hopper only, 9.0).
func AttentionSupport(g GPU) []Support {
	fa2 := Support{Feature: "FlashAttention-2"}
	fa3 := Support{Feature: "FlashAttention-3"}
	switch cc := g.capability(); {
	case cc == 0:
		fa2.Status, fa3.Status = Unknown, Unknown
	case cc >= 80 && cc <= 90:
		fa2.Status = Yes
	case cc > 90:
		fa2.Status, fa2.Note = Partial, "not built for Blackwell by every release: engines use FlashInfer or cuDNN attention there"
	default:
		fa2.Status, fa2.Note = No, "FlashAttention-2 needs 8.0 (Ampere)"
	}
	switch cc := g.capability(); {
	case cc == 0:
	case cc == 90:
		fa3.Status = Yes
	default:
		fa3.Status, fa3.Note = No, "FlashAttention-3 is written for Hopper (9.0) only"
	}
	return []Support{fa2, fa3}
}

// SupportFor is a card's compatibility table for an estimate: its weight
// and KV precisions, then FlashAttention-2 and -3.
func SupportFor(g GPU, weights, kv Precision) []Support {
	return append([]Support{WeightSupport(g, weights), KVSupport(g, kv)}, AttentionSupport(g)...)
}

func atLeast(cc, need int, why string) (string, string) {
	if cc >= need {
		return Yes, ""
	}
	return No, why
}

// minCUDA is the oldest CUDA that builds for each architecture (sm_80 came
// with CUDA 11.0, sm_89 and sm_90 with 11.8, sm_100 with 12.8).
var minCUDA = map[string]string{"Ampere": "11.0", "Ada": "11.8", "Hopper": "11.8", "Blackwell": "12.8"}

// cudaBuildRe finds the CUDA a PyTorch build was made for in an engine's
// version string ("torch-2.11.0+cu130" → 13.0).
var cudaBuildRe = regexp.MustCompile(`\+cu(\d{2,3})\b`)

// EnvCheck is a measured run's environment set against the card's needs.
type EnvCheck struct {
	GPU      string    `json:"gpu"`
	Arch     string    `json:"arch,omitempty"`
	CUDA     string    `json:"cuda,omitempty"`   // what nvidia-smi reports: the newest CUDA the driver runs
	Driver   string    `json:"driver,omitempty"` // the driver's version
	Engine   string    `json:"engine,omitempty"` // the engine's version as it reported it
	Support  []Support `json:"support"`
	Problems []string  `json:"problems,omitempty"` // empty when everything checked is fine
}

// CheckEnvironment checks a run's card, driver CUDA and engine build against
// the compatibility table: the card's architecture needs a CUDA at least
// minCUDA; an engine built for a newer CUDA (torch +cuNNN) than the driver
// runs fails to start its kernels; and the weight and KV precisions must be
// supported.
func CheckEnvironment(gpuName, cuda, driver, engineVersion string, weights, kv Precision) EnvCheck {
	ec := EnvCheck{GPU: gpuName, CUDA: cuda, Driver: driver, Engine: engineVersion}
	g, ok := FindGPU(gpuName)
	if !ok {
		ec.Problems = append(ec.Problems, fmt.Sprintf("card %q is not in the catalog: its compute capability is unknown", gpuName))
		return ec
	}
	ec.Arch = g.Arch + " " + g.ComputeCapability
	ec.Support = SupportFor(g, weights, kv)
	for _, s := range ec.Support[:2] {
		if s.Status == No {
			ec.Problems = append(ec.Problems, fmt.Sprintf("%s on %s: %s", s.Feature, g.Name, s.Note))
		}
	}
	if cuda == "" {
		ec.Problems = append(ec.Problems, "CUDA version not recorded: pin it (nvidia-smi)")
	} else if need := minCUDA[g.Arch]; need != "" && versionLess(cuda, need) {
		ec.Problems = append(ec.Problems, fmt.Sprintf("CUDA %s on %s (%s): the architecture needs CUDA %s or later", cuda, g.Name, g.Arch, need))
	}
	if m := cudaBuildRe.FindStringSubmatch(engineVersion); m != nil && cuda != "" {
		build := m[1][:len(m[1])-1] + "." + m[1][len(m[1])-1:]
		if versionLess(cuda, build) {
			ec.Problems = append(ec.Problems, fmt.Sprintf("engine built for CUDA %s but the driver runs CUDA %s at most: update the driver or pin a cu%s build",
				build, cuda, strings.ReplaceAll(cuda, ".", "")))
		}
	}
	if engineVersion == "" {
		ec.Problems = append(ec.Problems, "engine version not recorded: pin it")
	}
	return ec
}

// versionLess compares dotted versions numerically ("12.8" < "13.0").
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
