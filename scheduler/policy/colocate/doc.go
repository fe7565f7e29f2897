// Package colocate is Horus' interference predictor: from what is known of
// two jobs before they run (their models' computation-graph features, batch
// sizes and GPU type) it predicts how much each slows down when both share
// one GPU, so placement co-locates only pairs predicted to stay under a
// bound.
//
// The model is a ridge regression of log slowdown on features of the job
// and of its partner (compute and activation traffic per step, parameters,
// the mix of convolution, dense and recurrent work) and their products,
// one per GPU type. It is trained on Gavel's measured pairs
// (profile.LoadGavel) and judged leave-one-model-out: every pair that
// involves the held-out model is predicted by a regression that never saw
// that model, with its ridge strength chosen by an inner leave-one-model-out
// over the training models only, so no prediction is tuned on its own test
// pairs.
package colocate
