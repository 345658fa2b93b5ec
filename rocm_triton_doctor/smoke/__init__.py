"""`smoke`: run the fused Triton kernels — correct? how fast against torch and the hardware's own ceilings?"""
