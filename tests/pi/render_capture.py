# Renders a `tmux capture-pane -e -p` dump (SGR colours) to a PNG. Dev tool for docs/media
# (docs/media/regenerate.sh). Usage: render_capture.py CAPTURE PNG, or --check (the fonts and
# Pillow are there). Needs Debian's python3-pil, fonts-dejavu-core and fonts-symbola.
import os, re, sys
FONTS = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf": "fonts-dejavu-core",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf": "fonts-dejavu-core",
    "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf": "fonts-symbola",
}
def die(message):
    print(f"render_capture.py: {message}", file=sys.stderr)
    sys.exit(1)
try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError:
    die("Python's PIL missing (apt-get install -y python3-pil)")
missing = sorted({pkg for path, pkg in FONTS.items() if not os.path.isfile(path)})
if missing:
    die(f"fonts missing (apt-get install -y {' '.join(missing)})")
if sys.argv[1:] == ["--check"]:
    sys.exit(0)
if len(sys.argv) != 3:
    die("usage: render_capture.py CAPTURE PNG (a tmux capture-pane -e -p dump)")
src, out = sys.argv[1], sys.argv[2]
try:
    text = open(src, encoding="utf-8").read()
except (OSError, UnicodeDecodeError) as e:
    die(f"cannot read {src}: {e}")
# Every row of the screen, blank ones too (capture-pane ends each with a newline).
lines = (text[:-1] if text.endswith("\n") else text).split("\n")
paths = list(FONTS)
mono = ImageFont.truetype(paths[0], 15)
bold = ImageFont.truetype(paths[1], 15)
sym = ImageFont.truetype(paths[2], 15)
cw, ch = 9, 19
tok = re.compile(r"\x1b\[([0-9;]*)m")
def width(line):
    return sum(2 if ord(c) >= 0x1F000 else 1 for c in tok.sub("", line))
cols = max([104] + [width(line) for line in lines])
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
# Light box drawing as lines through the cell, so that a frame has no gaps between rows
# (a font's glyph is shorter than the row): which of left, right, up, down each joins.
BOX = {"─": "lr", "│": "ud", "╭": "rd", "┌": "rd", "╮": "ld", "┐": "ld", "╰": "ru", "└": "ru",
       "╯": "lu", "┘": "lu", "├": "udr", "┤": "udl", "┬": "lrd", "┴": "lru", "┼": "lrud"}
ROUNDED = {"╭": 180, "╮": 270, "╯": 0, "╰": 90}  # where each arc starts (degrees, clockwise)
def box(x, y, char, colour):
    arms = BOX[char]
    cx, cy = 12 + x * cw + cw // 2, 12 + y * ch + ch // 2
    left, right, top, bottom = 12 + x * cw, 12 + (x + 1) * cw - 1, 12 + y * ch, 12 + (y + 1) * ch - 1
    ends = {"l": (left, cy), "r": (right, cy), "u": (cx, top), "d": (cx, bottom)}
    if char in ROUNDED:  # a quarter circle of radius r, then straight to the two edges
        r = cw // 2
        h, v = arms[0], arms[1]
        sx, sy = (1 if h == "r" else -1), (1 if v == "d" else -1)
        ox, oy = cx + sx * r, cy + sy * r
        d.arc((ox - r, oy - r, ox + r, oy + r), ROUNDED[char], ROUNDED[char] + 90, fill=colour)
        d.line((ox, cy) + ends[h], fill=colour, width=1)
        d.line((cx, oy) + ends[v], fill=colour, width=1)
        return
    for arm in arms:
        d.line((cx, cy) + ends[arm], fill=colour, width=1)
for y, line in enumerate(lines):
    # bg None: the terminal's own background; reverse: swapped (the cursor's block).
    fg, bg, isbold, dim, reverse, x, pos = FG, None, False, False, False, 0, 0
    for m in list(tok.finditer(line)) + [None]:
        text = line[pos:m.start()] if m else line[pos:]
        for chr_ in text:
            ink, paper = (bg or BG, fg) if reverse else (fg, bg)
            colour = tuple(int(c * 0.6) for c in ink) if dim else ink
            font = bold if isbold else mono
            if ord(chr_) > 0x2FFF and ord(chr_) not in range(0x2500, 0x2600): font = sym
            w = 2 if ord(chr_) >= 0x1F000 else 1
            if paper is not None:
                d.rectangle((12 + x * cw, 12 + y * ch, 12 + (x + w) * cw - 1, 12 + (y + 1) * ch - 1), fill=paper)
            if chr_ in BOX:
                box(x, y, chr_, colour)
            else:
                d.text((12 + x * cw, 12 + y * ch), chr_, font=font, fill=colour)
            x += w
        if not m: break
        pos = m.end()
        params = [int(p) if p else 0 for p in m.group(1).split(";")] if m.group(1) else [0]
        i = 0
        while i < len(params):
            p = params[i]
            if p == 0: fg, bg, isbold, dim, reverse = FG, None, False, False, False
            elif p == 1: isbold = True
            elif p == 2: dim = True
            elif p == 7: reverse = True
            elif p == 22: isbold = dim = False
            elif p == 27: reverse = False
            elif p == 39: fg = FG
            elif p == 49: bg = None
            elif 30 <= p <= 37: fg = base16[p - 30]
            elif 90 <= p <= 97: fg = base16[p - 90 + 8]
            elif 40 <= p <= 47: bg = base16[p - 40]
            elif 100 <= p <= 107: bg = base16[p - 100 + 8]
            elif p in (38, 48) and i + 2 < len(params):
                if params[i+1] == 5: colour = c256(params[i+2]); i += 2
                elif params[i+1] == 2 and i + 4 < len(params): colour = tuple(params[i+2:i+5]); i += 4
                else: colour = None
                if colour is not None:
                    if p == 38: fg = colour
                    else: bg = colour
            i += 1
try:
    img.save(out, format="PNG", optimize=True)
except OSError as e:
    die(f"cannot write {out}: {e}")
