// Package plan reads measured runs through results for the sizing pages:
// the phases of a run (MeasurePhases), its plan at the recommended level
// (PlanRun), the measured memory beside the prediction (CheckMeasured) and
// the selection sheet over several runs (Select). The arithmetic it
// applies is sizing's, which reads no run.
package plan
