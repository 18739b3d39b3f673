// 512 x 512 Mandelbrot set, one pixel per thread (the "choosing the right dimensions"
// experiments).
extern "C" __global__ void mandelbrot(unsigned char* out, int width, int height, int max_iter) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= width * height) return;
    float cx = -2.0f + 2.5f * (i % width) / width;
    float cy = -1.25f + 2.5f * (i / width) / height;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (x * x + y * y <= 4.0f && it < max_iter) {
        float t = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = t;
        ++it;
    }
    out[i] = (unsigned char)(255 * it / max_iter);
}
