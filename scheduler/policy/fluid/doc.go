// Package fluid is the Fluid (MLSys'21) policy: it water-fills each
// tuning job's share of GPUs over the job's current trials. When trials
// outnumber GPUs it packs k per GPU with fractions, k bounded by memory and
// by the packing slowdown of the interference model (profile.Interference);
// when GPUs outnumber trials it gives trials more workers as far as their
// measured scaling (Optimus' speed model, optimus.Speed) still gains. A
// trial that reports no utilisation takes its model's measured profile's
// (Profiles, by Job.Model and batch size). The
// one-trial-per-whole-GPU and fixed-fraction baselines are modes of the
// same planner, so comparisons differ only in the plan.
package fluid
