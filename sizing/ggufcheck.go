package sizing

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/extractbench/extractbench/numfmt"
)

// GGUFCheck sets the calculator's GGUF tensors for a file's shape and
// scheme (GGUFTensors) beside the file's own, tensor by tensor.
type GGUFCheck struct {
	Path      string `json:"path,omitempty"`
	Model     string `json:"model"`
	Scheme    string `json:"scheme"`
	FileBytes int64  `json:"file_bytes"`
	// FileTensorBytes is the file's tensor data (what llama.cpp reports as
	// the model's size); PredictedBytes the calculator's.
	FileTensorBytes int64 `json:"file_tensor_bytes"`
	PredictedBytes  int64 `json:"predicted_bytes"`
	Fallbacks       int   `json:"fallbacks"` // tensors the calculator expects to fall back
	// FileTypes and PredictedTypes sum the tensors by ggml type.
	FileTypes      []GGUFTypeCount `json:"file_types"`
	PredictedTypes []GGUFTypeCount `json:"predicted_types"`
	// Differences lists each tensor whose type, shape or bytes differ, or
	// that only one side has; empty when the calculator is right.
	Differences []GGUFDifference `json:"differences"`
}

// GGUFDifference is one tensor the calculator and the file disagree on;
// an empty type is a tensor that side does not have.
type GGUFDifference struct {
	Tensor         string `json:"tensor"`
	PredictedType  string `json:"predicted_type"`
	PredictedBytes int64  `json:"predicted_bytes"`
	FileType       string `json:"file_type"`
	FileBytes      int64  `json:"file_bytes"`
}

// CheckGGUF predicts g's tensors from its shape in scheme ("" = the file's
// own, general.file_type) and compares them with g's.
func CheckGGUF(g *GGUFFile, scheme string) (GGUFCheck, error) {
	if scheme == "" {
		scheme = g.Scheme
	}
	if scheme == "" {
		return GGUFCheck{}, fmt.Errorf("GGUF %s: file type %d is not a scheme the calculator knows (bf16, f16, f32, q8_0, q6_k, q4_k_m, q4_0)", g.Path, g.FileType)
	}
	pred, err := GGUFTensors(g.Model, scheme)
	if err != nil {
		return GGUFCheck{}, err
	}
	c := GGUFCheck{Path: g.Path, Model: g.Model.Name, Scheme: scheme, FileBytes: g.FileBytes, FileTensorBytes: g.TensorBytes,
		FileTypes: GGUFTypeCounts(g.Tensors), PredictedTypes: GGUFTypeCounts(pred), Differences: []GGUFDifference{}}
	file := map[string]GGUFTensor{}
	for _, t := range g.Tensors {
		file[t.Name] = t
	}
	seen := map[string]bool{}
	for _, p := range pred {
		c.PredictedBytes += p.Bytes()
		if p.Fallback != "" {
			c.Fallbacks++
		}
		f, ok := file[p.Name]
		seen[p.Name] = true
		switch {
		case !ok:
			c.Differences = append(c.Differences, GGUFDifference{Tensor: p.Name, PredictedType: p.Type.Name, PredictedBytes: p.Bytes()})
		case f.Type != p.Type || f.RowLength != p.RowLength || f.Rows != p.Rows:
			c.Differences = append(c.Differences, GGUFDifference{Tensor: p.Name, PredictedType: p.Type.Name, PredictedBytes: p.Bytes(),
				FileType: f.Type.Name, FileBytes: f.Bytes()})
		}
	}
	for _, f := range g.Tensors {
		if !seen[f.Name] {
			c.Differences = append(c.Differences, GGUFDifference{Tensor: f.Name, FileType: f.Type.Name, FileBytes: f.Bytes()})
		}
	}
	return c, nil
}

// WriteText writes the check for people: the totals, the tensors by type
// on both sides, and every tensor they disagree on.
func (c GGUFCheck) WriteText(w io.Writer) error {
	ew := &numfmt.Writer{W: w}
	verdict := "the calculator's tensors are the file's"
	if len(c.Differences) > 0 {
		verdict = fmt.Sprintf("%d tensors differ (below)", len(c.Differences))
	}
	ew.Printf("GGUF %s: %s as %s, %s bytes in all; %s\n", c.Path, c.Model, c.Scheme, numfmt.GroupDigits(c.FileBytes), verdict)
	d := c.PredictedBytes - c.FileTensorBytes
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	ew.Printf("  tensor bytes: calculator %s, file %s (%s%s B)", numfmt.GroupDigits(c.PredictedBytes), numfmt.GroupDigits(c.FileTensorBytes),
		sign, numfmt.GroupDigits(d))
	if c.Fallbacks > 0 {
		ew.Printf("; the calculator expects %d of the scheme's tensors to fall back to another type (rows not whole blocks)", c.Fallbacks)
	}
	ew.Printf("\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  side\ttype\ttensors\tbytes\t\n")
	for _, side := range []struct {
		name string
		ts   []GGUFTypeCount
	}{{"calculator", c.PredictedTypes}, {"file", c.FileTypes}} {
		for _, t := range side.ts {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t\n", side.name, t.Type, t.Tensors, numfmt.GroupDigits(t.Bytes))
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write GGUF check: %w", err)
	}
	for _, d := range c.Differences {
		ew.Printf("  differs: %s: calculator %s %s B, file %s %s B\n", d.Tensor, orNone(d.PredictedType), numfmt.GroupDigits(d.PredictedBytes),
			orNone(d.FileType), numfmt.GroupDigits(d.FileBytes))
	}
	if ew.Err != nil {
		return fmt.Errorf("write GGUF check: %w", ew.Err)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
