#!/bin/bash
# Llama 3 70B pre-training with Megatron-LM (mcore) on 64 nodes of 8 H100: t=8 p=4 d=16,
# sequence 8192, 1024 sequences per step. Launched on every node by torchrun.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nproc_per_node 8 --nnodes 64 --node_rank "$NODE_RANK" \
    --master_addr "$MASTER_ADDR" --master_port 6000 \
  pretrain_gpt.py \
    --use-mcore-models \
    --transformer-impl transformer_engine \
    --num-layers 80 \
    --hidden-size 8192 \
    --ffn-hidden-size 28672 \
    --num-attention-heads 64 \
    --group-query-attention \
    --num-query-groups 8 \
    --seq-length 8192 \
    --max-position-embeddings 8192 \
    --position-embedding-type rope \
    --rotary-base 500000 \
    --swiglu \
    --normalization RMSNorm \
    --norm-epsilon 1e-5 \
    --disable-bias-linear \
    --untie-embeddings-and-output-weights \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --tokenizer-type HuggingFaceTokenizer \
    --tokenizer-model meta-llama/Meta-Llama-3-70B \
    --vocab-size 128256 \
    --make-vocab-size-divisible-by 128 \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 4 \
    --context-parallel-size 1 \
    --sequence-parallel \
    --use-distributed-optimizer \
    --overlap-grad-reduce \
    --recompute-granularity selective \
    --micro-batch-size 1 \
    --global-batch-size 1024 \
    --bf16 \
    --attention-backend fused \
    --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --lr-warmup-iters 2000 \
    --weight-decay 0.1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95 \
    --init-method-std 0.02 \
    --train-iters 500000 \
    --data-path /data/llama3/text_document --split 99,1,0 \
    --save /checkpoints/llama3-70b --load /checkpoints/llama3-70b --save-interval 1000 \
    --log-interval 10 --eval-interval 1000 --eval-iters 10 \
    --tensorboard-dir /logs/llama3-70b --seed 1234
