# Renders a `tmux capture-pane -e -p` dump (SGR colours) to a PNG. Dev tool for docs/media.
import re, sys
from PIL import Image, ImageDraw, ImageFont
src, out = sys.argv[1], sys.argv[2]
lines = open(src, encoding="utf-8").read().rstrip("\n").split("\n")
mono = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", 15)
bold = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf", 15)
sym = ImageFont.truetype("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf", 15)
cw, ch = 9, 19
cols = 104
BG, FG = (30, 32, 38), (220, 220, 220)
base16 = [(0,0,0),(205,49,49),(13,188,121),(229,229,16),(36,114,200),(188,63,188),(17,168,205),(229,229,229),
          (102,102,102),(241,76,76),(35,209,139),(245,245,67),(59,142,234),(214,112,214),(41,184,219),(255,255,255)]
def c256(n):
    if n < 16: return base16[n]
    if n < 232:
        n -= 16; r, g, b = n // 36, (n // 6) % 6, n % 6
        return tuple(0 if v == 0 else 55 + v * 40 for v in (r, g, b))
    v = 8 + (n - 232) * 10; return (v, v, v)
img = Image.new("RGB", (cols * cw + 24, len(lines) * ch + 24), BG)
d = ImageDraw.Draw(img)
tok = re.compile(r"\x1b\[([0-9;]*)m")
for y, line in enumerate(lines):
    fg, isbold, dim, x, pos = FG, False, False, 0, 0
    for m in list(tok.finditer(line)) + [None]:
        text = line[pos:m.start()] if m else line[pos:]
        for chr_ in text:
            colour = tuple(int(c * 0.6) for c in fg) if dim else fg
            font = bold if isbold else mono
            if ord(chr_) > 0x2FFF and ord(chr_) not in range(0x2500, 0x2600): font = sym
            d.text((12 + x * cw, 12 + y * ch), chr_, font=font, fill=colour)
            x += 2 if ord(chr_) >= 0x1F000 else 1
        if not m: break
        pos = m.end()
        params = [int(p) if p else 0 for p in m.group(1).split(";")] if m.group(1) else [0]
        i = 0
        while i < len(params):
            p = params[i]
            if p == 0: fg, isbold, dim = FG, False, False
            elif p == 1: isbold = True
            elif p == 2: dim = True
            elif p == 22: isbold = dim = False
            elif p == 39: fg = FG
            elif 30 <= p <= 37: fg = base16[p - 30]
            elif 90 <= p <= 97: fg = base16[p - 90 + 8]
            elif p == 38 and i + 1 < len(params):
                if params[i+1] == 5: fg = c256(params[i+2]); i += 2
                elif params[i+1] == 2: fg = tuple(params[i+2:i+5]); i += 4
            i += 1
img.save(out, optimize=True)
