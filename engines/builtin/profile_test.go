package builtin

import (
	"strings"
	"testing"
)

func TestLookupProfile(t *testing.T) {
	tests := []struct {
		name                string
		wantName, wantDtype string
		wantWeightsGiB      float64 // ±0.05
		wantKVBytesPerToken int64
		wantBlocksAtLeast   int
	}{
		// Llama-3.1-8B: 2 × 32 layers × 8 heads × 128 × 2 bytes = 128 KiB per token.
		{"sim-8b", "sim-8b", "bf16", 14.96, 131072, 2100},
		{"sim-8b-int8", "sim-8b-int8", "int8", 7.70, 131072, 5000},
		{"sim-8b-int4", "sim-8b-int4", "int4", 4.19, 131072, 7500},
		{"sim-1b", "sim-1b", "bf16", 2.31, 32768, 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := LookupProfile(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			gib := float64(p.WeightBytes()) / (1 << 30)
			if p.Name != tt.wantName || p.Dtype != tt.wantDtype || gib < tt.wantWeightsGiB-0.05 || gib > tt.wantWeightsGiB+0.05 ||
				p.KVBytesPerToken() != tt.wantKVBytesPerToken || p.KVBlocks() < tt.wantBlocksAtLeast {
				t.Errorf("got %s %s weights %.2f GiB, KV %d B/token, %d blocks; want %s %s %.2f GiB, %d B/token, >= %d blocks",
					p.Name, p.Dtype, gib, p.KVBytesPerToken(), p.KVBlocks(), tt.wantName, tt.wantDtype, tt.wantWeightsGiB, tt.wantKVBytesPerToken, tt.wantBlocksAtLeast)
			}
			if err := p.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
	if _, err := LookupProfile("gpt-9"); err == nil || !strings.Contains(err.Error(), "sim-8b") {
		t.Errorf("unknown model: error %v, want one listing the presets", err)
	}
	if got := len(Presets()); got != 6 {
		t.Errorf("Presets() has %d names, want 6", got)
	}
}

func TestProfile_QuantisedDecodesFaster(t *testing.T) {
	bf16, _ := LookupProfile("sim-8b")
	int4, _ := LookupProfile("sim-8b-int4")
	if int4.DecodeStepBase >= bf16.DecodeStepBase {
		t.Errorf("int4 step %v, bf16 step %v: want int4 faster", int4.DecodeStepBase, bf16.DecodeStepBase)
	}
	if back := int4.WithVariant("bf16"); back.DecodeStepBase != bf16.DecodeStepBase || back.Name != "sim-8b" {
		t.Errorf("int4 back to bf16: %s step %v, want sim-8b step %v", back.Name, back.DecodeStepBase, bf16.DecodeStepBase)
	}
}

func TestProfile_Validate(t *testing.T) {
	p, _ := LookupProfile("sim-8b")
	tests := []struct {
		name string
		edit func(*Profile)
		want string
	}{
		{"on kv full", func(p *Profile) { p.OnKVFull = "explode" }, "on-kv-full"},
		{"too small a GPU", func(p *Profile) { p.GPUMemoryBytes = 16 << 30 }, "cannot hold"},
		{"negative time scale", func(p *Profile) { p.TimeScale = -1 }, "time scale"},
		{"no layers", func(p *Profile) { p.Layers = 0 }, "shape"},
	}
	for _, tt := range tests {
		q := p
		tt.edit(&q)
		if err := q.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}
