# Independent check of Newcombe (1998) method 10, written from the paper's
# formulas in the A-minus-B orientation; our Go code reports B minus A.
from statistics import NormalDist
from math import sqrt, comb
def wilson(x, n, z):
    p = x / n
    a = 2*n*p + z*z
    b = z*sqrt(z*z + 4*n*p*(1-p))
    c = 2*(n + z*z)
    return (a-b)/c, (a+b)/c
def newcombe10(a, b, c, d, conf):
    n = a+b+c+d
    z = NormalDist().inv_cdf(1-(1-conf)/2)
    p1, p2 = (a+b)/n, (a+c)/n   # A, B
    l1, u1 = wilson(a+b, n, z)
    l2, u2 = wilson(a+c, n, z)
    e, f, g, h = a+b, c+d, a+c, b+d
    if e*f*g*h == 0:
        phi = 0.0
    else:
        A = a*d - b*c
        C = A - n/2 if A > n/2 else (0 if A >= 0 else A)
        phi = C / sqrt(e*f*g*h)
    th = p1 - p2
    L = th - sqrt((p1-l1)**2 - 2*phi*(p1-l1)*(u2-p2) + (u2-p2)**2)
    U = th + sqrt((u1-p1)**2 - 2*phi*(u1-p1)*(p2-l2) + (p2-l2)**2)
    L, U = max(-1, L), min(1, U)
    return -U, -L   # B minus A
def mcnemar(b, c):
    m = b+c
    if m == 0: return 1.0
    return min(1.0, 2*sum(comb(m, i) for i in range(min(b,c)+1))/2**m)
for case in [(14,5,0,22),(36,12,2,0),(300,0,0,0),(270,0,0,30),(30,0,0,0),(0,10,0,0),(0,0,10,0),(280,9,6,5),(294,3,3,0)]:
    for conf in (0.90, 0.95):
        lo, hi = newcombe10(*case, conf)
        print(case, conf, "%.10f %.10f" % (lo, hi))
    print("  mcnemar", "%.12g" % mcnemar(case[1], case[2]))
