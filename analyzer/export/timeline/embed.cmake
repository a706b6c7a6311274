# cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# Writes a C file holding IN as a NUL-terminated char array NAME.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE "${OUT}" "/* generated from ${IN} by embed.cmake */\nextern const char ${NAME}[];\nconst char ${NAME}[] = {\n${body}0x00 };\n")
