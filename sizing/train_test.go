package sizing

import (
	"bytes"
	"strings"
	"testing"
)

// TestTraining checks each training path against figures computed by hand
// for Llama-3.1-8B (P = 8,030,261,248 parameters), one sequence of 2,048 tokens:
//
//	activations per layer per token: 2 × (4 × 4096 + 2 × 4096 + 2 × 1024 + 4 × 14,336) = 167,936 B
//	  all layers kept: 32 × 2,048 × 167,936 = 11,005,853,696 B
//	  checkpointing: 32 × 2,048 × 4096 × 2 B = 536,870,912 + one layer 2,048 × 167,936 = 343,932,928 → 880,803,840 B
//	logits: 2,048 × 128,256 × 6 B = 1,576,009,728 B; overhead 1,073,741,824 B
//	LoRA r = 16 on every linear layer: 16 × 32 × (2 × (4096 + 4096) + 2 × (4096 + 1024) + 3 × (4096 + 14,336)) = 41,943,040
//
//	full, AdamW: 16 × P = 128,484,179,968 (weights 2P, master 4P, gradients 2P, moments 8P)
//	  + 11,005,853,696 + 1,576,009,728 + 1,073,741,824 = 142,139,785,216 B; × 1.1 = 156,353,763,738
//	  H200 (126.9e9 usable): no; B200 (162e9): (162e9/1.1 − 129,557,921,792) / 12,581,863,424 = 1.4 → 1
//	full, 8-bit Adam: 10 × P + the same = 93,958,217,728 B;
//	  H200: (126.9e9/1.1 − 81,376,354,304) / 12,581,863,424 = 2.7 → 2 sequences
//	LoRA, AdamW, checkpointing: 2P + 16 × 41,943,040 (fp32 adapters 4, gradients 4, moments 8)
//	  + 880,803,840 + 1,576,009,728 + 1,073,741,824 = 20,262,166,528 B; the L4 holds no sequence
//	QLoRA, SGD, checkpointing: NF4 6,979,321,856 × 2113/4096 = 3,600,416,768 + 2,101,878,784 in bf16
//	  = 5,702,295,552; + 12 × 41,943,040 + 880,803,840 + 1,576,009,728 + 1,073,741,824 = 9,736,167,424 B;
//	  L4 (21.6e9 usable): (21.6e9/1.1 − 7,279,353,856) / 2,456,813,568 = 5.0 → 5 sequences
func TestTraining(t *testing.T) {
	m := mustPreset(t, "Llama-3.1-8B")
	tests := []struct {
		name                            string
		in                              TrainInputs
		trained, weights, grads, states int64
		act, total                      int64
		card                            string
		fits                            bool
		maxBatch                        int
	}{
		{"full adamw", TrainInputs{Method: FullFineTune}, 8_030_261_248, 16_060_522_496, 16_060_522_496, 64_242_089_984,
			11_005_853_696, 142_139_785_216, "B200", true, 1},
		{"full adamw on H200", TrainInputs{Method: FullFineTune}, 8_030_261_248, 16_060_522_496, 16_060_522_496, 64_242_089_984,
			11_005_853_696, 142_139_785_216, "H200", false, 0},
		{"full 8-bit adam", TrainInputs{Method: FullFineTune, Optimizer: Adam8bit}, 8_030_261_248, 16_060_522_496, 16_060_522_496, 16_060_522_496,
			11_005_853_696, 93_958_217_728, "H200", true, 2},
		{"lora adamw checkpointing", TrainInputs{Method: LoRA, Checkpointing: true}, 41_943_040, 16_060_522_496, 167_772_160, 335_544_320,
			880_803_840, 20_262_166_528, "L4", false, 0},
		{"qlora sgd checkpointing", TrainInputs{Method: QLoRA, Optimizer: SGD, Checkpointing: true}, 41_943_040, 5_702_295_552, 167_772_160, 167_772_160,
			880_803_840, 9_736_167_424, "L4", true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Model, in.MicroBatch, in.SeqLen = m, 1, 2048
			e, err := CalculateTraining(in)
			if err != nil {
				t.Fatal(err)
			}
			if e.TrainedParams != tt.trained || e.WeightBytes != tt.weights || e.GradientBytes != tt.grads ||
				e.OptimizerBytes != tt.states || e.ActivationBytes != tt.act || e.TotalBytes != tt.total {
				t.Errorf("got trained %d weights %d gradients %d states %d activations %d total %d",
					e.TrainedParams, e.WeightBytes, e.GradientBytes, e.OptimizerBytes, e.ActivationBytes, e.TotalBytes)
			}
			if e.LogitBytes != 1_576_009_728 {
				t.Errorf("logits: got %d", e.LogitBytes)
			}
			var f TrainFit
			for _, x := range e.Fits {
				if x.GPU.Name == tt.card {
					f = x
				}
			}
			if f.Fits != tt.fits || f.MaxMicroBatch != tt.maxBatch {
				t.Errorf("%s: got fits %v max micro-batch %d, want %v %d", tt.card, f.Fits, f.MaxMicroBatch, tt.fits, tt.maxBatch)
			}
		})
	}
}

// TestTrainingMasterAndAdapters: full fine-tuning keeps a 4 B master copy
// (32,121,044,992 B for Llama-3.1-8B) and no adapters; LoRA the reverse
// (4 × 41,943,040 = 167,772,160 B of fp32 adapters).
func TestTrainingMasterAndAdapters(t *testing.T) {
	m := mustPreset(t, "Llama-3.1-8B")
	full, _ := CalculateTraining(TrainInputs{Model: m, Method: FullFineTune, MicroBatch: 1, SeqLen: 16})
	lora, _ := CalculateTraining(TrainInputs{Model: m, Method: LoRA, MicroBatch: 1, SeqLen: 16})
	if full.MasterBytes != 32_121_044_992 || full.AdapterBytes != 0 || lora.MasterBytes != 0 || lora.AdapterBytes != 167_772_160 {
		t.Errorf("got full master %d adapters %d, LoRA master %d adapters %d", full.MasterBytes, full.AdapterBytes, lora.MasterBytes, lora.AdapterBytes)
	}
	for _, bad := range []TrainInputs{
		{Model: m, Method: "dpo", MicroBatch: 1, SeqLen: 1},
		{Model: m, Method: LoRA, Optimizer: "lion", MicroBatch: 1, SeqLen: 1},
		{Model: m, Method: LoRA, MicroBatch: 0, SeqLen: 1},
	} {
		if _, err := CalculateTraining(bad); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	var buf bytes.Buffer
	if err := lora.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LoRA adapters", "Rajbhandari et al., ZeRO", "Dettmers et al., QLoRA", "max micro-batch"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}
