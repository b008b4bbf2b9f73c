#!/usr/bin/env python3
"""Extracts raw little-endian int16/int32 sample arrays from real data shipped in Debian 12 packages
(MRI volumes, DICOM images and an ECG, astronomical CCD frames), for the bitpack benchmarks: numeric
data that nobody made for the purpose. Standard library only. Run by bench/numeric/fetch, which
downloads the packages and unpacks them with `dpkg -x` into DIR/root.

usage: extract.py DIR
Output: DIR/raw/<set>/<name>.raw  (headers stripped, little-endian samples)
        DIR/raw/MANIFEST.tsv      (provenance of every file: package, version, path, type, dims)
Synthetic files found in those packages (ramps, noise, all-zero images) are left out on purpose.
"""
import array, gzip, hashlib, os, struct, subprocess, sys

BASE = sys.argv[1] if len(sys.argv) > 1 else '/tmp/gdfs-numeric'
ROOT = os.path.join(BASE, 'root')
DEBS = os.path.join(BASE, 'debs')
OUT = os.path.join(BASE, 'raw')
PY = 'usr/lib/python3/dist-packages'
MIDAS = 'usr/lib/eso-midas/22FEB/test'

_ver = {}
def pkgver(pkg):
    if pkg not in _ver:
        deb = [f for f in os.listdir(DEBS) if f.startswith(pkg + '_')][0]
        _ver[pkg] = subprocess.check_output(
            ['dpkg-deb', '-f', os.path.join(DEBS, deb), 'Version'], text=True).strip()
    return _ver[pkg]

manifest = []
seen = set()
def emit(setname, name, data, pkg, src, typ, dims, note=''):
    h = hashlib.sha1(data).hexdigest()
    if h in seen:
        print('  skip duplicate', src); return
    seen.add(h)
    d = os.path.join(OUT, setname); os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name + '.raw')
    with open(p, 'wb') as f: f.write(data)
    manifest.append((setname, p, pkg, pkgver(pkg), '/' + src, typ,
                     'x'.join(map(str, dims)), str(len(data)), note))
    print('  %s/%s.raw  %d bytes  %s %s' % (setname, name, len(data), typ, dims))

def rd(src):
    path = os.path.join(ROOT, src)
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rb') as f: return f.read()

# ---------------------------------------------------------------- NIfTI
NIFTI_DT = {4: ('int16', 2), 512: ('uint16', 2), 8: ('int32', 4), 768: ('uint32', 4)}
def nifti(setname, pkg, src):
    d = rd(src)
    sz = struct.unpack('<i', d[:4])[0]
    if sz == 348:
        ndim, *dim = struct.unpack('<8h', d[40:56]); dt = struct.unpack('<h', d[70:72])[0]
        vo = int(struct.unpack('<f', d[108:112])[0])
    elif sz == 540:
        dt = struct.unpack('<h', d[12:14])[0]; ndim, *dim = struct.unpack('<8q', d[16:80])
        vo = struct.unpack('<q', d[168:176])[0]
    else:
        raise ValueError('not a little-endian NIfTI: ' + src)
    typ, bps = NIFTI_DT[dt]
    dims = dim[:ndim]; n = bps
    for x in dims: n *= x
    emit(setname, os.path.basename(src).split('.')[0], d[vo:vo + n], pkg, src, typ, dims,
         'NIfTI-%d, vox_offset %d' % (1 if sz == 348 else 2, vo))

# ---------------------------------------------------------------- DICOM
LONGVR = {b'OB', b'OW', b'OF', b'OD', b'OL', b'OV', b'SQ', b'UT', b'UN', b'UC', b'UR', b'SV', b'UV'}
UNDEF = 0xFFFFFFFF
class Encapsulated(Exception): pass

def dcm_parse(d, pos, end, explicit, out, depth):
    """Parse elements from pos until end (or until an item delimiter when end is None).
    Appends (tag, depth, value) to out.  Returns the position after the parsed range."""
    while pos + 8 <= len(d) and (end is None or pos < end):
        grp, el = struct.unpack('<HH', d[pos:pos + 4]); tag = (grp << 16) | el
        if grp == 0xFFFE:                      # item delimiter (end of undefined-length item)
            if el == 0xE00D: return pos + 8
            raise ValueError('unexpected %08x at %d' % (tag, pos))
        vr = None
        if explicit:
            vr = d[pos + 4:pos + 6]
            if vr in LONGVR: ln = struct.unpack('<I', d[pos + 8:pos + 12])[0]; pos += 12
            else: ln = struct.unpack('<H', d[pos + 6:pos + 8])[0]; pos += 8
        else:
            ln = struct.unpack('<I', d[pos + 4:pos + 8])[0]; pos += 8
        if ln == UNDEF:
            if tag == 0x7FE00010: raise Encapsulated()
            pos = dcm_seq(d, pos, None, explicit, out, depth + 1)
            continue
        val = d[pos:pos + ln]
        if vr == b'SQ' or (vr in (None, b'UN') and val[:4] == b'\xfe\xff\x00\xe0'):
            dcm_seq(d, pos, pos + ln, explicit, out, depth + 1)
        else:
            out.append((tag, depth, val))
        pos += ln
    return pos

def dcm_seq(d, pos, end, explicit, out, depth):
    while pos + 8 <= len(d) and (end is None or pos < end):
        grp, el, ln = struct.unpack('<HHI', d[pos:pos + 8]); pos += 8
        if (grp, el) == (0xFFFE, 0xE0DD): return pos
        if (grp, el) != (0xFFFE, 0xE000): raise ValueError('bad item at %d' % pos)
        if ln == UNDEF: pos = dcm_parse(d, pos, None, explicit, out, depth)
        else: dcm_parse(d, pos, pos + ln, explicit, out, depth); pos += ln
    return pos

def dcm_elements(src):
    d = rd(src)
    if d[128:132] == b'DICM':
        pos = 132; meta = []
        # group 0002 is always explicit VR LE
        while struct.unpack('<H', d[pos:pos + 2])[0] == 2:
            pos = dcm_parse(d, pos, pos + 1, True, meta, 0)
        ts = dict((t, v) for t, _, v in meta)[0x00020010].rstrip(b'\0 ').decode()
    else:
        pos = 0; ts = '1.2.840.10008.1.2.1' if d[4:6].isalpha() and d[4:6].isupper() else '1.2.840.10008.1.2'
    if ts not in ('1.2.840.10008.1.2', '1.2.840.10008.1.2.1'):
        return ts, None
    out = []
    try: dcm_parse(d, pos, len(d), ts.endswith('.1'), out, 0)
    except Encapsulated: return ts + ' (encapsulated)', None
    return ts, out

def u16(v): return struct.unpack('<H', v[:2])[0]

def dicom_image(setname, pkg, src, name):
    ts, el = dcm_elements(src)
    if el is None:
        print('  skip %s: transfer syntax %s' % (src, ts)); return
    top = dict((t, v) for t, dep, v in el if dep == 0)
    if 0x7FE00010 not in top: print('  skip %s: no PixelData' % src); return
    ba = u16(top[0x00280100]); pr = u16(top[0x00280103]); spp = u16(top.get(0x00280002, b'\1\0'))
    rows = u16(top[0x00280010]); cols = u16(top[0x00280011])
    nf = int(top.get(0x00280008, b'1').strip(b'\0 ') or 1)
    if ba not in (16, 32) or spp != 1:
        print('  skip %s: BitsAllocated %d SamplesPerPixel %d' % (src, ba, spp)); return
    typ = ('u' if pr == 0 else '') + 'int%d' % ba
    pix = top[0x7FE00010][:rows * cols * nf * ba // 8]
    bs = u16(top.get(0x00280101, b'\0\0'))
    emit(setname, name, pix, pkg, src, typ, (cols, rows, nf),
         'DICOM PixelData (7FE0,0010), TS %s, BitsStored %d' % (ts, bs))

def dicom_waveform(setname, pkg, src, name):
    ts, el = dcm_elements(src)
    # waveform items: channels (003A,0005), samples (003A,0010), bits (5400,1004),
    # interpretation (5400,1006), data (5400,1010); one multiplex group per item
    grp = {}; groups = []
    for t, dep, v in el:
        if t == 0x003A0005: grp = {'ch': u16(v)}; groups.append(grp)
        elif t == 0x003A0010: grp['n'] = struct.unpack('<I', v[:4])[0]
        elif t == 0x54001004: grp['bits'] = u16(v)
        elif t == 0x54001006: grp['interp'] = v.strip(b'\0 ').decode()
        elif t == 0x54001010: grp['data'] = v
    for i, g in enumerate(groups):
        assert g['bits'] == 16 and g['interp'] == 'SS', g
        emit(setname, '%s_group%d' % (name, i), g['data'], pkg, src, 'int16',
             (g['ch'], g['n']), 'DICOM WaveformData (5400,1010), channel-interleaved, TS ' + ts)

# ---------------------------------------------------------------- raw (PAR/REC)
def rawfile(setname, pkg, src, name, typ, dims, note):
    emit(setname, name, rd(src), pkg, src, typ, dims, note)

# ---------------------------------------------------------------- FITS (big-endian -> LE)
def fits_hdus(d):
    off = 0
    while off + 2880 <= len(d):
        cards = {}; end = False
        while not end and off < len(d):
            blk = d[off:off + 2880]; off += 2880
            for i in range(36):
                c = blk[i * 80:i * 80 + 80].decode('ascii', 'replace')
                if c[:8].strip() == 'END': end = True; break
                if c[8:10] == '= ': cards[c[:8].strip()] = c[10:].split('/')[0].strip().strip("'").strip()
        if 'BITPIX' not in cards: return
        bp = int(cards['BITPIX']); n = int(cards.get('NAXIS', 0))
        dims = [int(cards['NAXIS%d' % (i + 1)]) for i in range(n)]
        cnt = 1 if n else 0
        for x in dims: cnt *= x
        nb = abs(bp) // 8 * cnt
        yield cards, bp, dims, d[off:off + nb]
        off += (nb + 2879) // 2880 * 2880

def fits_image(setname, pkg, src, name, physical=True, hdu_index=None):
    """Integer image HDUs, byte-swapped to little endian.  If BZERO = 2^(bits-1) and
    BSCALE = 1 (the FITS convention for unsigned data) and physical=True, flip the sign
    bit so the output is the physical unsigned value (what a native LE uint file holds)."""
    d = rd(src)
    for k, (cards, bp, dims, data) in enumerate(fits_hdus(d)):
        if hdu_index is not None and k != hdu_index: continue
        if bp not in (16, 32) or not data: continue
        a = array.array('h' if bp == 16 else 'i'); a.frombytes(data); a.byteswap()
        le = bytearray(a.tobytes())
        bz = float(cards.get('BZERO', '0')); bs = float(cards.get('BSCALE', '1'))
        typ = 'int%d' % bp; note = 'FITS HDU %d BITPIX %d byte-swapped BE->LE' % (k, bp)
        if bz == 2.0 ** (bp - 1) and bs == 1.0:
            if physical:
                hi = slice(bp // 8 - 1, None, bp // 8)
                le[hi] = le[hi].translate(bytes(x ^ 0x80 for x in range(256)))
                typ = 'uint%d' % bp; note += ', BZERO=2^%d applied (sign bit flipped)' % (bp - 1)
            else:
                note += ', stored signed values (BZERO=2^%d not applied)' % (bp - 1)
        elif bz or bs != 1.0:
            note += ', BZERO=%s BSCALE=%s (stored values)' % (cards.get('BZERO'), cards.get('BSCALE'))
        inst = cards.get('INSTRUME') or cards.get('TELESCOP')
        if inst: note += ', instrument ' + inst
        emit(setname, name + ('' if hdu_index is None and k == 0 else '_hdu%d' % k), bytes(le),
             pkg, src, typ, dims, note)

# ================================================================ the sets
def main():
    print('mri-int16 (NIfTI volumes + Philips PAR/REC)')
    for pkg, src in [
        ('python3-nibabel', PY + '/nibabel/tests/data/example4d.nii.gz'),
        # nibabel/tests/data/functional.nii left out: uniform random noise (synthetic)
        ('python3-nibabel', PY + '/nibabel/tests/data/example_nifti2.nii.gz'),
        ('python3-dipy', PY + '/dipy/data/files/S0_10slices.nii.gz'),
        ('python3-dipy', PY + '/dipy/data/files/aniso_vox.nii.gz'),
        ('python3-dipy', PY + '/dipy/data/files/small_101D.nii.gz'),
        ('python3-dipy', PY + '/dipy/data/files/small_64D.nii'),
        ('python3-nitime', PY + '/nitime/data/fmri1.nii.gz'),
        ('python3-nitime', PY + '/nitime/data/fmri2.nii.gz')]:
        nifti('mri-int16', pkg, src)
    rawfile('mri-int16', 'python3-nibabel', PY + '/nibabel/tests/data/phantom_EPI_asc_CLEAR_2_1.REC',
            'phantom_EPI_asc_CLEAR_2_1', 'int16', (64, 64, 27),
            'Philips REC, 16-bit LE per the .PAR (phantom_varscale.REC is identical)')

    print('dicom-int16 (uncompressed little-endian 16-bit DICOM images)')
    T = PY + '/pydicom/data/test_files/'
    for pkg, src in [
        ('python3-pydicom', T + 'CT_small.dcm'),
        ('python3-pydicom', T + 'MR_small.dcm'),
        ('python3-pydicom', T + 'liver_1frame.dcm'),
        ('python3-pydicom', T + 'no_meta.dcm'),
        ('python3-pydicom', T + 'MR_small_implicit.dcm'),
        # nibabel/tests/data/{0,1}.dcm left out: pixel data is a synthetic ramp (i mod 4096)
        ('python3-nibabel', PY + '/nibabel/nicom/tests/data/slicethickness_empty_string.dcm'),
        # nibabel/nicom/tests/data/decimal_rescale.dcm left out: pixel data all zero
        ('python3-nibabel', PY + '/nibabel/nicom/tests/data/csa_slice_norm.dcm')]:
        dicom_image('dicom-int16', pkg, src, os.path.basename(os.path.dirname(src)) + '_' +
                    os.path.basename(src).split('.')[0])
    # dicomdirtests/*: 16x16 thumbnails (512 B each) -- too small to page, left out

    print('ecg-int16 (DICOM 12-lead ECG waveform)')
    dicom_waveform('ecg-int16', 'python3-pydicom', T + 'waveform_ecg.dcm', 'waveform_ecg')

    print('fits-ccd-u16 (astronomical CCD/photographic-plate frames)')
    for src, name in [(MIDAS + '/prim/nttexample.mt', 'nttexample'),
                      (MIDAS + '/prim/badfitskeys.mt', 'badfitskeys'),
                      (MIDAS + '/prim/wcstest.mt', 'wcstest'),
                      (MIDAS + '/prim/dss_test1.fits', 'dss_test1'),
                      (MIDAS + '/prim/dss_test2.fits', 'dss_test2')]:
        fits_image('fits-ccd-u16', 'eso-midas-testdata', src, name)

    print('fits-ccd-u32 (NOT/ALFOSC CCD frame, 32-bit)')
    fits_image('fits-ccd-u32', 'eso-midas-testdata', MIDAS + '/prim/NOT.fits', 'NOT_alfosc', hdu_index=1)
    print('fits-ccd-i32st (same frame, stored signed int32 without BZERO)')
    seen.clear()
    fits_image('fits-ccd-i32st', 'eso-midas-testdata', MIDAS + '/prim/NOT.fits', 'NOT_alfosc',
               physical=False, hdu_index=1)

    print('fits-misc-i32 (XMM EPIC-MOS counts map, TIMMI2 mid-IR frames)')
    for src, name in [(MIDAS + '/prim/image_M12c.fits', 'image_M12c'),
                      (MIDAS + '/prim/timmi2.fits', 'timmi2'),
                      # fits/tst0003.mt (ramp 1..N) and fits/tst0004.mt (cosine pattern) left out: synthetic
                      ]:
        fits_image('fits-misc-i32', 'eso-midas-testdata', src, name)

    with open(os.path.join(OUT, 'MANIFEST.tsv'), 'w') as f:
        f.write('set\tfile\tpackage\tversion\tsource\ttype\tdims\tbytes\tnote\n')
        for m in manifest: f.write('\t'.join(m) + '\n')

if __name__ == '__main__':
    main()
