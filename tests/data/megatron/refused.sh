# Arguments trident does not model: an encoder and hierarchical context parallelism.
pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \
  --vocab-size 32000 --micro-batch-size 1 --global-batch-size 64 --bf16 \
  --tensor-model-parallel-size 8 --use-distributed-optimizer --encoder-num-layers 2 \
  --cp-comm-type a2a+p2p
